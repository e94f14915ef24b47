import Foundation

/// A value stored in an ``ODB`` table: an immutable Swift value with no tie to the store.
///
/// For example:
/// ```swift
/// let value: ODBValue = .string("Bull Mancuso")
/// let name: String? = value.as(String.self)   // "Bull Mancuso"
/// let count: Int? = value.as(Int.self)        // nil: not an int
/// ```
public enum ODBValue: Hashable, Sendable, CustomStringConvertible {
    /// A boolean.
    case bool(Bool)
    /// A 64-bit signed integer.
    case int(Int)
    /// A 64-bit floating-point number.
    case double(Double)
    /// A moment in time (stored exactly: `Date`'s own value, seconds since 2001 as a `Double`).
    case date(Date)
    /// A Unicode string.
    case string(String)
    /// Bytes.
    case data(Data)

    /// The value as a `T` when it is of that kind, else nil.
    public func `as`<T: ODBValueConvertible>(_ type: T.Type) -> T? { T(odbValue: self) }

    /// The boolean, or nil for another kind.
    public var boolValue: Bool? { self.as(Bool.self) }
    /// The integer, or nil for another kind.
    public var intValue: Int? { self.as(Int.self) }
    /// The number (an int is converted), or nil for another kind.
    public var doubleValue: Double? { self.as(Double.self) }
    /// The date, or nil for another kind.
    public var dateValue: Date? { self.as(Date.self) }
    /// The string, or nil for another kind.
    public var stringValue: String? { self.as(String.self) }
    /// The bytes, or nil for another kind.
    public var dataValue: Data? { self.as(Data.self) }

    /// The kind's name: `bool`, `int`, `double`, `date`, `string` or `data`.
    public var kindName: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .date: "date"
        case .string: "string"
        case .data: "data"
        }
    }

    /// The value as text: `true`, `42`, `1.5`, an ISO 8601 date, the string, or the bytes in base64.
    public var description: String {
        switch self {
        case .bool(let value): String(value)
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .date(let value): ODBValue.formatDate(value)
        case .string(let value): value
        case .data(let value): value.base64EncodedString()
        }
    }

    /// `date` as ISO 8601 with fractional seconds, in UTC.
    static func formatDate(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// Parses an ISO 8601 date, with or without fractional seconds.
    static func parseDate(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}

/// A Swift type an ``ODBValue`` converts to and from: `Bool`, `Int`, `Double`, `Date`, `String`, `Data`.
public protocol ODBValueConvertible: Sendable {
    /// The value as this type, or nil when it is of another kind.
    init?(odbValue: ODBValue)
    /// This value as an ``ODBValue``.
    var odbValue: ODBValue { get }
}

extension Bool: ODBValueConvertible {
    /// The boolean of a `.bool`.
    public init?(odbValue: ODBValue) {
        guard case .bool(let value) = odbValue else { return nil }
        self = value
    }
    /// `.bool(self)`.
    public var odbValue: ODBValue { .bool(self) }
}

extension Int: ODBValueConvertible {
    /// The integer of an `.int`.
    public init?(odbValue: ODBValue) {
        guard case .int(let value) = odbValue else { return nil }
        self = value
    }
    /// `.int(self)`.
    public var odbValue: ODBValue { .int(self) }
}

extension Double: ODBValueConvertible {
    /// The number of a `.double`, or an `.int` converted.
    public init?(odbValue: ODBValue) {
        switch odbValue {
        case .double(let value): self = value
        case .int(let value): self = Double(value)
        default: return nil
        }
    }
    /// `.double(self)`.
    public var odbValue: ODBValue { .double(self) }
}

extension Date: ODBValueConvertible {
    /// The date of a `.date`.
    public init?(odbValue: ODBValue) {
        guard case .date(let value) = odbValue else { return nil }
        self = value
    }
    /// `.date(self)`.
    public var odbValue: ODBValue { .date(self) }
}

extension String: ODBValueConvertible {
    /// The string of a `.string`.
    public init?(odbValue: ODBValue) {
        guard case .string(let value) = odbValue else { return nil }
        self = value
    }
    /// `.string(self)`.
    public var odbValue: ODBValue { .string(self) }
}

extension Data: ODBValueConvertible {
    /// The bytes of a `.data`.
    public init?(odbValue: ODBValue) {
        guard case .data(let value) = odbValue else { return nil }
        self = value
    }
    /// `.data(self)`.
    public var odbValue: ODBValue { .data(self) }
}
