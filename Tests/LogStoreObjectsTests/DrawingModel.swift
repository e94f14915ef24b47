import LogStoreObjects

// Use case 1: a drawing. Shapes are a protocol; layers hold `[any Shape]`; a layer can be shared by pages.

struct Point: Codable, Equatable {
    var x: Double
    var y: Double
}

struct Size: Codable, Equatable {
    var width: Double
    var height: Double
}

protocol Shape: PersistentObject {
    var area: Double { get }
}

final class Circle: Shape {
    static let typeName = "Circle"
    var center: Point
    var radius: Double
    var area: Double { Double.pi * radius * radius }

    init(center: Point, radius: Double) {
        self.center = center
        self.radius = radius
    }
}

final class Rectangle: Shape {
    static let typeName = "Rectangle"
    var origin: Point
    var size: Size
    var area: Double { size.width * size.height }

    init(origin: Point, size: Size) {
        self.origin = origin
        self.size = size
    }
}

final class Layer: PersistentObject {
    static let typeName = "Layer"
    var name: String
    @ObjectList var shapes: [any Shape]

    init(name: String, shapes: [any Shape]) {
        self.name = name
        self.shapes = shapes
    }
}

final class Page: PersistentObject {
    static let typeName = "Page"
    var title: String
    var layers: [Layer]

    init(title: String, layers: [Layer]) {
        self.title = title
        self.layers = layers
    }
}

final class Contents: PersistentObject {
    static let typeName = "Contents"
    var pages: [Page]

    init(pages: [Page]) { self.pages = pages }
}

let drawingTypes: [any PersistentObject.Type] = [
    Contents.self, Page.self, Layer.self, Circle.self, Rectangle.self,
]

/// The drawing of use case 1: two pages, three layers (the first shared by both pages), five shapes.
struct Drawing {
    let c1 = Circle(center: Point(x: 1, y: 2), radius: 3)
    let c2 = Circle(center: Point(x: -4, y: 5.5), radius: 0.5)
    let r1 = Rectangle(origin: Point(x: 0, y: 0), size: Size(width: 10, height: 20))
    let r2 = Rectangle(origin: Point(x: 7, y: 8), size: Size(width: 1, height: 2))
    let c3 = Circle(center: Point(x: 9, y: 9), radius: 9)
    let layer1: Layer
    let layer2: Layer
    let layer3: Layer
    let contents: Contents

    init() {
        layer1 = Layer(name: "background", shapes: [c1, r1])
        layer2 = Layer(name: "figures", shapes: [c2, r2])
        layer3 = Layer(name: "notes", shapes: [c3])
        let page1 = Page(title: "one", layers: [layer1, layer2])
        let page2 = Page(title: "two", layers: [layer1, layer3])
        contents = Contents(pages: [page1, page2])
    }
}
