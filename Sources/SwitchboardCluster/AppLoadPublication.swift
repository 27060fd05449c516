import SwitchboardCore

/// What this node's app hash in Redis holds, as far as the link knows, so a beat writes only the
/// apps whose load changed since the last: with thousands of apps a beat carries the few that
/// changed in that second, not all of them. A pure value.
///
/// The whole hash is written again (`replacesAll`) on the first beat, after a beat that failed
/// (what Redis holds is then unknown), and after a beat that found the hash gone while it should
/// have held apps (Redis lost it, or it expired while the node was paused): in that last case
/// the hash lacks the apps that did not change for the one beat in between.
struct AppLoadPublication: Sendable {
    /// What a beat writes.
    struct Changes: Sendable, Equatable {
        /// Remove every field first.
        var replacesAll: Bool
        /// The apps to write, by id.
        var set: [(app: AppID, load: AppLoad)]
        /// The apps to remove.
        var removed: [AppID]

        static func == (a: Self, b: Self) -> Bool {
            a.replacesAll == b.replacesAll && a.removed == b.removed
                && a.set.map(\.app) == b.set.map(\.app) && a.set.map(\.load) == b.set.map(\.load)
        }
    }

    /// What Redis holds; nil when unknown.
    private var written: [AppID: AppLoad]?

    init() {}

    /// What the next beat writes so that Redis holds `current` (sorted by app id).
    func changes(to current: [AppID: AppLoad]) -> Changes {
        guard let written else {
            return Changes(replacesAll: true, set: current.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, removed: [])
        }
        let set = current.filter { written[$0.key] != $0.value }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let removed = written.keys.filter { current[$0] == nil }.sorted()
        return Changes(replacesAll: false, set: set, removed: removed)
    }

    /// The beat that wrote `changes` towards `current` ran; `hashWasThere` says whether the hash
    /// existed before it.
    mutating func wrote(_ changes: Changes, toward current: [AppID: AppLoad], hashWasThere: Bool) {
        let lost = !changes.replacesAll && !hashWasThere && !(written?.isEmpty ?? true)
        written = lost ? nil : current
    }

    /// A beat failed: what Redis holds is unknown.
    mutating func failed() { written = nil }
}
