import LogStoreExamples
import LogStorePersistent

// LogStoreExamples' drawing (hand-written `FieldCodable` classes) declared again with `@Persistent`: the
// same type names and fields, so each reads the other's stores.

@Persistent("Circle") final class MacroCircle: LogStoreExamples.Shape {
    var center: LogStoreExamples.Point
    var radius: Double
    var area: Double { Double.pi * radius * radius }
    var description: String { "Circle center \(center) radius \(radius)" }
    init(center: LogStoreExamples.Point, radius: Double) {
        self.center = center
        self.radius = radius
    }
}

@Persistent("Rectangle") final class MacroRectangle: LogStoreExamples.Shape {
    var origin: LogStoreExamples.Point
    var size: LogStoreExamples.Size
    var area: Double { size.width * size.height }
    var description: String { "Rectangle origin \(origin) size \(size)" }
    init(origin: LogStoreExamples.Point, size: LogStoreExamples.Size) {
        self.origin = origin
        self.size = size
    }
}

@Persistent("Layer") final class MacroLayer {
    var name: String
    var shapes: [any LogStoreExamples.Shape]
    init(name: String, shapes: [any LogStoreExamples.Shape]) {
        self.name = name
        self.shapes = shapes
    }
}

@Persistent("Page") final class MacroPage {
    var title: String
    var layers: [MacroLayer]
    init(title: String, layers: [MacroLayer]) {
        self.title = title
        self.layers = layers
    }
}

@Persistent("Contents") final class MacroContents {
    var pages: [MacroPage]
    init(pages: [MacroPage]) { self.pages = pages }
}

let macroDrawingTypes: [any PersistentObject.Type] = [
    MacroContents.self, MacroPage.self, MacroLayer.self, MacroCircle.self, MacroRectangle.self,
]
