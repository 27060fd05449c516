import SwitchboardCore

/// Cuts a topic snapshot into pushes that each fit one frame (`PushParts`): a full channel (128
/// members in 8 topics each, long ids and metas) lists several hundred kilobytes. A topic with
/// many publishers may be cut between two parts; the receiver joins it again.
enum TopicParts {
    /// The parts of a snapshot of `topics`, each a copy of `event` with a share of them.
    static func snapshot(_ topics: [TopicInfo], as event: TopicEvent) -> [TopicEvent] {
        // One entry per publisher (a topic nobody publishes in, should there be one, is one entry
        // of its own), each charged for its topic too, so a part's cost is an upper bound.
        let entries = topics.flatMap { info -> [(topic: String, publisher: TopicPublisher?)] in
            info.publishers.isEmpty ? [(info.topic, nil)] : info.publishers.map { (info.topic, $0) }
        }
        let groups = PushParts.cut(entries) { entry in
            entry.topic.utf8.count + 32 + (entry.publisher.map { $0.userId.utf8.count + $0.meta.utf8.count + 24 } ?? 0)
        }
        return PushParts.parts(of: event, groups) { part, group in
            var infos: [TopicInfo] = []
            for entry in group {
                if infos.last?.topic != entry.topic { infos.append(TopicInfo(topic: entry.topic, publishers: [])) }
                if let publisher = entry.publisher { infos[infos.count - 1].publishers.append(publisher) }
            }
            part.topicInfos = infos
        }
    }
}
