import SwitchboardCore

/// The little JSON the admin endpoints write by hand.
enum JSONText {
    /// `text` as a JSON string literal, quotes included.
    static func quoted(_ text: String) -> String { JSONQuoting.quoted(text) }
}
