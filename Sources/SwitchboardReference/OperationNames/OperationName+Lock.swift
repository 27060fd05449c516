extension OperationName {
    /// Locks.
    public enum Lock: String, OperationNameTable {
        /// `setLock`.
        case setLock
        /// `removeLock`.
        case removeLock
        /// `acquireLock`.
        case acquireLock
        /// `releaseLock`.
        case releaseLock
        /// `revokeLock`.
        case revokeLock
        /// `getLocks`.
        case getLocks
        /// Whether a writer holds a lock (Switchboard's own: storage asks before a locked write).
        case checkLockHolder
    }
}
