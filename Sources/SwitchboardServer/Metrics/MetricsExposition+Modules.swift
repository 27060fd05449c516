import SwitchboardCore

/// The families the modules' own counts make (`ModuleStatistics`).
extension MetricsExposition {
    func writeModules(_ out: inout PrometheusText) {
        if let presence = modules.presence { writePresence(presence, &out) }
        if let storage = modules.storage { writeStorage(storage, &out) }
        if let locks = modules.locks { writeLocks(locks, &out) }
    }

    private func writePresence(_ counts: [RtmChannelType: MembershipCount], _ out: inout PrometheusText) {
        let types: [(RtmChannelType, String)] = [(.message, "message"), (.stream, "stream")]
        out.family("switchboard_presence_channels", .gauge, help: "Channels with at least one member, by channel type.")
        for (type, label) in types {
            out.sample("switchboard_presence_channels", [("channel_type", label)], UInt64(counts[type]?.channels ?? 0))
        }
        out.family(
            "switchboard_presence_members", .gauge,
            help: "Channel memberships (a session in two channels counts twice), by channel type.")
        for (type, label) in types {
            out.sample("switchboard_presence_members", [("channel_type", label)], UInt64(counts[type]?.members ?? 0))
        }
    }

    private func writeStorage(_ counts: StorageCounts, _ out: inout PrometheusText) {
        let kinds: [(MetadataWriteKind, String)] = [(.set, "set"), (.update, "update"), (.remove, "remove")]
        out.family("switchboard_metadata_writes_total", .counter, help: "Metadata writes committed, channel and user metadata, by kind.")
        for (kind, label) in kinds {
            out.sample("switchboard_metadata_writes_total", [("kind", label)], counts.writes[kind] ?? 0)
        }
        out.single(
            "switchboard_metadata_revision_conflicts_total", .counter,
            help: "Metadata writes refused because a revision they named was not the stored one.", counts.revisionConflicts)
        out.family(
            "switchboard_metadata_commit_duration_seconds", .histogram,
            help: "Time the metadata store took to commit (or refuse) a write.")
        out.histogram("switchboard_metadata_commit_duration_seconds", [], counts.commitLatency)
    }

    private func writeLocks(_ counts: LockCounts, _ out: inout PrometheusText) {
        out.family("switchboard_locks", .gauge, help: "Locks that exist, by whether someone holds them.")
        out.sample("switchboard_locks", [("state", "held")], UInt64(counts.held))
        out.sample("switchboard_locks", [("state", "free")], UInt64(counts.locks - counts.held))
        out.single("switchboard_lock_waiters", .gauge, help: "Sessions waiting in the lines of locks.", UInt64(counts.waiters))
    }
}
