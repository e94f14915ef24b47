import LogStoreObjects

// The drawing of the object-layer demo (use case 1 of the guide): shapes are a protocol, layers hold
// `[any Shape]`, pages hold layers (one layer is shared by two pages), contents hold pages. Every type
// is `Codable` and also `FieldCodable` (the fast path; the guide's §2 shows the plain `Codable` version).

/// A point of the drawing.
struct Point: FieldCodable, Equatable, CustomStringConvertible {
    var x: Double
    var y: Double
    var description: String { "(\(x.formatted), \(y.formatted))" }

    init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(x, for: "x")
        try fields.write(y, for: "y")
    }

    init(fields: FieldReader) throws {
        x = try fields.read(Double.self, for: "x")
        y = try fields.read(Double.self, for: "y")
    }
}

/// A width and a height.
struct Size: FieldCodable, Equatable, CustomStringConvertible {
    var width: Double
    var height: Double
    var description: String { "\(width.formatted) × \(height.formatted)" }

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(width, for: "width")
        try fields.write(height, for: "height")
    }

    init(fields: FieldReader) throws {
        width = try fields.read(Double.self, for: "width")
        height = try fields.read(Double.self, for: "height")
    }
}

/// Anything drawn on a layer.
protocol Shape: PersistentObject, CustomStringConvertible {
    var area: Double { get }
}

/// A circle.
final class Circle: Shape, FieldCodable {
    static let typeName = "Circle"
    var center: Point
    var radius: Double
    var area: Double { Double.pi * radius * radius }
    var description: String { "Circle center \(center) radius \(radius.formatted)" }

    init(center: Point, radius: Double) {
        self.center = center
        self.radius = radius
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(center, for: "center")
        try fields.write(radius, for: "radius")
    }

    init(fields: FieldReader) throws {
        center = try fields.read(Point.self, for: "center")
        radius = try fields.read(Double.self, for: "radius")
    }
}

/// A rectangle.
final class Rectangle: Shape, FieldCodable {
    static let typeName = "Rectangle"
    var origin: Point
    var size: Size
    var area: Double { size.width * size.height }
    var description: String { "Rectangle origin \(origin) size \(size)" }

    init(origin: Point, size: Size) {
        self.origin = origin
        self.size = size
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(origin, for: "origin")
        try fields.write(size, for: "size")
    }

    init(fields: FieldReader) throws {
        origin = try fields.read(Point.self, for: "origin")
        size = try fields.read(Size.self, for: "size")
    }
}

/// A named layer of shapes of any kind.
final class Layer: PersistentObject, FieldCodable {
    static let typeName = "Layer"
    var name: String
    @ObjectList var shapes: [any Shape]

    init(name: String, shapes: [any Shape]) {
        self.name = name
        self.shapes = shapes
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(name, for: "name")
        try fields.write(_shapes, for: "shapes")
    }

    init(fields: FieldReader) throws {
        name = try fields.read(String.self, for: "name")
        _shapes = try fields.read(ObjectList<any Shape>.self, for: "shapes")
    }
}

/// A page: layers, drawn in order.
final class Page: PersistentObject, FieldCodable {
    static let typeName = "Page"
    var title: String
    var layers: [Layer]

    init(title: String, layers: [Layer]) {
        self.title = title
        self.layers = layers
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(title, for: "title")
        try fields.write(layers, for: "layers")
    }

    init(fields: FieldReader) throws {
        title = try fields.read(String.self, for: "title")
        layers = try fields.read([Layer].self, for: "layers")
    }
}

/// The document: its pages.
final class Contents: PersistentObject, FieldCodable {
    static let typeName = "Contents"
    var pages: [Page]

    init(pages: [Page]) { self.pages = pages }

    func encodeFields(to fields: FieldWriter) throws { try fields.write(pages, for: "pages") }

    init(fields: FieldReader) throws { pages = try fields.read([Page].self, for: "pages") }
}

/// Every class of the drawing model.
let drawingTypes: [any PersistentObject.Type] = [
    Contents.self, Page.self, Layer.self, Circle.self, Rectangle.self,
]

extension Double {
    /// Without a trailing `.0` for whole numbers.
    fileprivate var formatted: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
