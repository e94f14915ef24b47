import LogStoreObjects

// Use case 2: shapes by inheritance, a diagram of two circles, and a lazily loaded square.

enum Geometry {
    class Shape: PersistentObject {
        class var typeName: String { "geometry.Shape" }
        var name: String
        func area() -> Double { 0 }

        init(name: String) { self.name = name }
    }

    final class Square: Shape {
        override class var typeName: String { "geometry.Square" }
        var side: Double
        override func area() -> Double { side * side }

        init(name: String, side: Double) {
            self.side = side
            super.init(name: name)
        }

        private enum CodingKeys: String, CodingKey { case side }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            side = try container.decode(Double.self, forKey: .side)
            try super.init(from: decoder)
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(side, forKey: .side)
            try super.encode(to: encoder)
        }
    }

    final class Circle: Shape {
        override class var typeName: String { "geometry.Circle" }
        var radius: Double
        override func area() -> Double { Double.pi * radius * radius }

        init(name: String, radius: Double) {
            self.radius = radius
            super.init(name: name)
        }

        private enum CodingKeys: String, CodingKey { case radius }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            radius = try container.decode(Double.self, forKey: .radius)
            // The superclass's fields in a nested container of their own, the other common pattern.
            try super.init(from: try container.superDecoder())
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(radius, forKey: .radius)
            try super.encode(to: container.superEncoder())
        }
    }

    final class VennDiagram: PersistentObject {
        static let typeName = "geometry.VennDiagram"
        var left: Circle
        var right: Circle
        /// Any shape, through the superclass type.
        var highlight: Shape?

        init(left: Circle, right: Circle, highlight: Shape?) {
            self.left = left
            self.right = right
            self.highlight = highlight
        }
    }

    final class LazySquare: PersistentObject {
        static let typeName = "geometry.LazySquare"
        var square: LazyRef<Square>

        init(square: Square) { self.square = LazyRef(square) }
    }
}

let geometryTypes: [any PersistentObject.Type] = [
    Geometry.Shape.self, Geometry.Square.self, Geometry.Circle.self, Geometry.VennDiagram.self,
    Geometry.LazySquare.self,
]
