import CSQLite

/// A failed SQLite call: its result code and message.
public struct SQLiteError: Error, CustomStringConvertible {
    /// SQLite's (extended) result code.
    public let code: Int32
    /// SQLite's message.
    public let message: String
    public var description: String { "\(message) (SQLite code \(code))" }
}

/// A value bound to a statement parameter.
public enum SQLiteValue {
    /// A 64-bit integer.
    case integer(Int64)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])
    /// NULL.
    case null
}

/// One row of a query result, valid only inside the row callback.
public struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    /// The column as an integer.
    public func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    /// The column as an integer; nil when NULL.
    public func optionalInteger(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : integer(column)
    }

    /// The column as text.
    public func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column as bytes.
    public func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}

/// One SQLite connection. Not thread-safe: it lives on one `DatabaseThread` and is used there only.
public final class SQLiteConnection {
    /// The database file.
    public let path: String
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if needed) the database at `path` for reading and writing.
    public init(path: String) throws(SQLiteError) {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(code: code, message: message)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { close() }

    /// Closes the connection (and releases its lock on the file); later calls fail.
    public func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Whether the file could only be opened read-only.
    public var isReadOnly: Bool { handle.map { sqlite3_db_readonly($0, "main") == 1 } ?? true }

    /// Runs one or more statements that return nothing of interest.
    public func execute(_ sql: String) throws(SQLiteError) {
        guard let handle else { throw closed }
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Runs `sql` with `bindings`, handing each result row to `row`.
    public func query(_ sql: String, _ bindings: [SQLiteValue] = [], row: (SQLiteRow) throws -> Void) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(bindings, to: statement)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code) }
            try row(SQLiteRow(statement: statement))
        }
    }

    /// Runs `sql` with `bindings` for its effect.
    public func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws {
        try query(sql, bindings) { _ in }
    }

    /// The first column of the first row, as text (for pragmas).
    public func text(_ sql: String) throws -> String? {
        var result: String?
        try query(sql) { row in if result == nil { result = row.text(0) } }
        return result
    }

    /// The first column of the first row, as an integer.
    public func integer(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> Int64? {
        var result: Int64?
        try query(sql, bindings) { row in if result == nil { result = row.optionalInteger(0) } }
        return result
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        guard let handle else { throw closed }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        statements[sql] = statement
        return statement
    }

    private func bind(_ values: [SQLiteValue], to statement: OpaquePointer) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .integer(let number): code = sqlite3_bind_int64(statement, index, number)
            case .null: code = sqlite3_bind_null(statement, index)
            case .text(let text):
                // withCString always gives a pointer, also for "", which a null pointer would bind as NULL.
                code = text.withCString { switchboard_sqlite3_bind_text_copy(statement, index, $0, Int32(text.utf8.count)) }
            case .blob(let bytes) where bytes.isEmpty:
                code = sqlite3_bind_zeroblob(statement, index, 0)
            case .blob(let bytes):
                code = bytes.withUnsafeBytes {
                    switchboard_sqlite3_bind_blob_copy(statement, index, $0.baseAddress, Int32($0.count))
                }
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code)))
    }

    private var closed: SQLiteError { SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed") }
}
