import LogStoreObjects

// The drawing of the object-layer demo (use case 1 of the guide): shapes are a protocol, layers hold
// `[any Shape]`, pages hold layers (one layer is shared by two pages), contents hold pages.

/// A point of the drawing.
struct Point: Codable, Equatable, CustomStringConvertible {
    var x: Double
    var y: Double
    var description: String { "(\(x.formatted), \(y.formatted))" }
}

/// A width and a height.
struct Size: Codable, Equatable, CustomStringConvertible {
    var width: Double
    var height: Double
    var description: String { "\(width.formatted) × \(height.formatted)" }
}

/// Anything drawn on a layer.
protocol Shape: PersistentObject, CustomStringConvertible {
    var area: Double { get }
}

/// A circle.
final class Circle: Shape {
    static let typeName = "Circle"
    var center: Point
    var radius: Double
    var area: Double { Double.pi * radius * radius }
    var description: String { "Circle center \(center) radius \(radius.formatted)" }

    init(center: Point, radius: Double) {
        self.center = center
        self.radius = radius
    }
}

/// A rectangle.
final class Rectangle: Shape {
    static let typeName = "Rectangle"
    var origin: Point
    var size: Size
    var area: Double { size.width * size.height }
    var description: String { "Rectangle origin \(origin) size \(size)" }

    init(origin: Point, size: Size) {
        self.origin = origin
        self.size = size
    }
}

/// A named layer of shapes of any kind.
final class Layer: PersistentObject {
    static let typeName = "Layer"
    var name: String
    @ObjectList var shapes: [any Shape]

    init(name: String, shapes: [any Shape]) {
        self.name = name
        self.shapes = shapes
    }
}

/// A page: layers, drawn in order.
final class Page: PersistentObject {
    static let typeName = "Page"
    var title: String
    var layers: [Layer]

    init(title: String, layers: [Layer]) {
        self.title = title
        self.layers = layers
    }
}

/// The document: its pages.
final class Contents: PersistentObject {
    static let typeName = "Contents"
    var pages: [Page]

    init(pages: [Page]) { self.pages = pages }
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
