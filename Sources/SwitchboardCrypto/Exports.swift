// The module builds on the primitives and TLS; whoever imports it uses them too.
@_exported import SwitchboardCryptography
