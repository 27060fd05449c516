extension OperationName {
    /// Cluster mode's steps between nodes, which the reference has no method for (a forwarded
    /// user message reports `Messages.publish`).
    public enum Relay: String, OperationNameTable {
        /// Listening for a channel's or a user's messages on other nodes.
        case openRelay
        /// Stopping that.
        case closeRelay
        /// Delivering another node's message here.
        case deliverRelayedMessage
        /// Listening for the changes other nodes make to a metadata set.
        case openMetadataRelay
        /// Handing another node's metadata change to the storage module here.
        case deliverRelayedMetadata
        /// Listening for what other nodes do to a channel's locks.
        case openLockRelay
        /// Handing a change of a channel's locks to the lock module here.
        case deliverRelayedLocks
        /// Listening for what other nodes do to a channel's presence.
        case openPresenceRelay
        /// Handing a change of a channel's presence to the presence module here.
        case deliverRelayedPresence
        /// Listening for a stream channel's topic changes and topic messages on other nodes.
        case openTopicRelay
        /// Handing a stream channel's topic change or topic message to the topic router here.
        case deliverRelayedTopics
        /// Making a login its user's newest across the nodes.
        case claimUser
        /// Ending a session here that a newer login of its user on another node replaced.
        case endReplacedSession
        /// Reading the status every live node published.
        case listClusterNodes
        /// Setting aside the numbers this node gives its sessions.
        case reserveSessionNumbers
        /// Taking over a session another node held.
        case adoptSession
        /// Telling the node that held a session that another has taken it over.
        case announceTakeOver
        /// Ending a session here that another node took over.
        case endMovedSession
        /// Moving a taken-over session's channel memberships to this node.
        case takeOverMemberships
        /// Subscribing a taken-over session again to its message channels here.
        case restoreSubscriptions
        /// Carrying out the server API's command on a user's sessions on every node.
        case commandUserAcrossNodes
        /// Counting an app's users online on any node.
        case countUsersAcrossNodes
    }
}
