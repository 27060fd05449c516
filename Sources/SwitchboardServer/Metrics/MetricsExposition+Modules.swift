import SwitchboardCore

/// The families the modules' own counts make (`ModuleStatistics`).
extension MetricsExposition {
    func writeModules(_ out: inout PrometheusText) {
        if let presence = modules.presence { writePresence(presence, &out) }
        if let storage = modules.storage { writeStorage(storage, &out) }
        if let locks = modules.locks { writeLocks(locks, &out) }
        if let webhooks = modules.webhooks { writeWebhooks(webhooks, &out) }
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

    private func writeWebhooks(_ counts: WebhookCounts, _ out: inout PrometheusText) {
        out.single(
            "switchboard_webhook_queued", .gauge, help: "Webhook deliveries waiting (one per event and receiver), in flight included.",
            UInt64(counts.queued))
        out.single("switchboard_webhook_enqueued_total", .counter, help: "Webhook deliveries added to the queue.", counts.enqueued)
        out.single("switchboard_webhook_sent_total", .counter, help: "Webhook deliveries a receiver took (a 2xx answer).", counts.sent)
        out.single(
            "switchboard_webhook_failed_attempts_total", .counter,
            help: "Webhook attempts that failed (no answer in time, no connection, a status other than 2xx); each is retried.",
            counts.failed)
        out.single(
            "switchboard_webhook_dropped_total", .counter,
            help: "Webhook deliveries given up: retried for the whole retry window, or refused by a full queue.", counts.dropped)
        out.family(
            "switchboard_webhook_delivery_duration_seconds", .histogram,
            help: "From a webhook event to its receiver's 2xx answer, retries included.")
        out.histogram("switchboard_webhook_delivery_duration_seconds", [], counts.latency)
    }
}
