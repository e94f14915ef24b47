import LogStoreObjects

// The drawing of the object-layer demo (use case 1 of the guide; an example, not API): shapes are a protocol, layers hold
// `[any Shape]`, pages hold layers (one layer is shared by two pages), contents hold pages. Every type
// is `Codable` and also `FieldCodable` (the fast path; the guide's §2 shows the plain `Codable` version).

/// A point of the drawing.
public struct Point: FieldCodable, Equatable, CustomStringConvertible {
    /// The horizontal coordinate.
    public var x: Double
    /// The vertical coordinate.
    public var y: Double
    /// A line for printing.
    public var description: String { "(\(x.formatted), \(y.formatted))" }

    /// A new point.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// Writes the fields.
    public func encodeFields(to fields: FieldWriter) throws {
        try fields.write(x, for: "x")
        try fields.write(y, for: "y")
    }

    /// Reads the fields `encodeFields(to:)` wrote.
    public init(fields: FieldReader) throws {
        x = try fields.read(Double.self, for: "x")
        y = try fields.read(Double.self, for: "y")
    }
}

/// A width and a height.
public struct Size: FieldCodable, Equatable, CustomStringConvertible {
    /// The width.
    public var width: Double
    /// The height.
    public var height: Double
    /// A line for printing.
    public var description: String { "\(width.formatted) × \(height.formatted)" }

    /// A new size.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// Writes the fields.
    public func encodeFields(to fields: FieldWriter) throws {
        try fields.write(width, for: "width")
        try fields.write(height, for: "height")
    }

    /// Reads the fields `encodeFields(to:)` wrote.
    public init(fields: FieldReader) throws {
        width = try fields.read(Double.self, for: "width")
        height = try fields.read(Double.self, for: "height")
    }
}

/// Anything drawn on a layer.
public protocol Shape: PersistentObject, CustomStringConvertible {
    var area: Double { get }
}

/// A circle.
public final class Circle: Shape, FieldCodable {
    /// The stored type name.
    public static let typeName = "Circle"
    /// The center.
    public var center: Point
    /// The radius.
    public var radius: Double
    /// The area.
    public var area: Double { Double.pi * radius * radius }
    /// A line for printing.
    public var description: String { "Circle center \(center) radius \(radius.formatted)" }

    /// A new circle.
    public init(center: Point, radius: Double) {
        self.center = center
        self.radius = radius
    }

    /// Writes the fields.
    public func encodeFields(to fields: FieldWriter) throws {
        try fields.write(center, for: "center")
        try fields.write(radius, for: "radius")
    }

    /// Reads the fields `encodeFields(to:)` wrote.
    public init(fields: FieldReader) throws {
        center = try fields.read(Point.self, for: "center")
        radius = try fields.read(Double.self, for: "radius")
    }
}

/// A rectangle.
public final class Rectangle: Shape, FieldCodable {
    /// The stored type name.
    public static let typeName = "Rectangle"
    /// The top left corner.
    public var origin: Point
    /// The width and height.
    public var size: Size
    /// The area.
    public var area: Double { size.width * size.height }
    /// A line for printing.
    public var description: String { "Rectangle origin \(origin) size \(size)" }

    /// A new rectangle.
    public init(origin: Point, size: Size) {
        self.origin = origin
        self.size = size
    }

    /// Writes the fields.
    public func encodeFields(to fields: FieldWriter) throws {
        try fields.write(origin, for: "origin")
        try fields.write(size, for: "size")
    }

    /// Reads the fields `encodeFields(to:)` wrote.
    public init(fields: FieldReader) throws {
        origin = try fields.read(Point.self, for: "origin")
        size = try fields.read(Size.self, for: "size")
    }
}

/// A named layer of shapes of any kind.
public final class Layer: PersistentObject, FieldCodable {
    /// The stored type name.
    public static let typeName = "Layer"
    /// The name.
    public var name: String
    /// The shapes, drawn in order.
    @ObjectList public var shapes: [any Shape]

    /// A new layer.
    public init(name: String, shapes: [any Shape]) {
        self.name = name
        self.shapes = shapes
    }

    /// Writes the fields.
    public func encodeFields(to fields: FieldWriter) throws {
        try fields.write(name, for: "name")
        try fields.write(_shapes, for: "shapes")
    }

    /// Reads the fields `encodeFields(to:)` wrote.
    public init(fields: FieldReader) throws {
        name = try fields.read(String.self, for: "name")
        _shapes = try fields.read(ObjectList<any Shape>.self, for: "shapes")
    }
}

/// A page: layers, drawn in order.
public final class Page: PersistentObject, FieldCodable {
    /// The stored type name.
    public static let typeName = "Page"
    /// The title.
    public var title: String
    /// The layers, bottom first.
    public var layers: [Layer]

    /// A new page.
    public init(title: String, layers: [Layer]) {
        self.title = title
        self.layers = layers
    }

    /// Writes the fields.
    public func encodeFields(to fields: FieldWriter) throws {
        try fields.write(title, for: "title")
        try fields.write(layers, for: "layers")
    }

    /// Reads the fields `encodeFields(to:)` wrote.
    public init(fields: FieldReader) throws {
        title = try fields.read(String.self, for: "title")
        layers = try fields.read([Layer].self, for: "layers")
    }
}

/// The document: its pages.
public final class Contents: PersistentObject, FieldCodable {
    /// The stored type name.
    public static let typeName = "Contents"
    /// The pages, in order.
    public var pages: [Page]

    /// A new contents.
    public init(pages: [Page]) { self.pages = pages }

    /// Writes the fields.
    public func encodeFields(to fields: FieldWriter) throws { try fields.write(pages, for: "pages") }

    /// Reads the fields `encodeFields(to:)` wrote.
    public init(fields: FieldReader) throws { pages = try fields.read([Page].self, for: "pages") }
}

/// Every class of the drawing model.
public let drawingTypes: [any PersistentObject.Type] = [
    Contents.self, Page.self, Layer.self, Circle.self, Rectangle.self,
]

extension Double {
    /// Without a trailing `.0` for whole numbers.
    fileprivate var formatted: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
