import SwitchboardCore

/// The server's log (Core's `SwitchboardLog`; each module gets it labelled with its name).
public typealias ServerLog = SwitchboardLog
