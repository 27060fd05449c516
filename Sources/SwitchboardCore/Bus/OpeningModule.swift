/// A module that opens something (a database, a key) once every module has started and before
/// the server accepts connections, so that it can ask other modules on the bus. If `open` throws,
/// the server does not start.
public protocol OpeningModule: Module {
    /// Opens what the module needs; throws an error whose description names what failed.
    func open() async throws
}
