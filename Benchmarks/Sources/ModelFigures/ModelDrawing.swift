import LogStoreExamples
import LogStorePersistent

// The drawing of `ObjectFigures` declared with `@Persistent`: the same type names, fields and bytes as
// LogStoreExamples' hand-written `FieldCodable` classes, so either model reads the other's store.

@Persistent("Circle") final class ModelCircle: Shape {
    var center: Point
    var radius: Double
    var area: Double { Double.pi * radius * radius }
    var description: String { "Circle radius \(radius)" }
    init(center: Point, radius: Double) {
        self.center = center
        self.radius = radius
    }
}

@Persistent("Rectangle") final class ModelRectangle: Shape {
    var origin: Point
    var size: Size
    var area: Double { size.width * size.height }
    var description: String { "Rectangle \(size)" }
    init(origin: Point, size: Size) {
        self.origin = origin
        self.size = size
    }
}

@Persistent("Layer") final class ModelLayer {
    var name: String
    var shapes: [any Shape]
    init(name: String, shapes: [any Shape]) {
        self.name = name
        self.shapes = shapes
    }
}

@Persistent("Page") final class ModelPage {
    var title: String
    var layers: [ModelLayer]
    init(title: String, layers: [ModelLayer]) {
        self.title = title
        self.layers = layers
    }
}

@Persistent("Contents") final class ModelContents {
    var pages: [ModelPage]
    init(pages: [ModelPage]) { self.pages = pages }
}

let modelDrawingTypes: [any PersistentObject.Type] = [
    ModelContents.self, ModelPage.self, ModelLayer.self, ModelCircle.self, ModelRectangle.self,
]

/// `ScaledDrawing` built from the `@Persistent` classes (the same values).
struct ScaledModelDrawing {
    let contents: ModelContents
    let objectCount: Int

    init(pages: Int, layersPerPage: Int, shapesPerLayer: Int) {
        var pageList: [ModelPage] = []
        var count = 1
        var previousFirstLayer: ModelLayer?
        for page in 0..<pages {
            var pageLayers: [ModelLayer] = []
            for layer in 0..<layersPerPage {
                var layerShapes: [any Shape] = []
                for index in 0..<shapesPerLayer {
                    let seed = Double(page * 1_000 + layer * 10 + index)
                    if index % 2 == 0 {
                        layerShapes.append(ModelCircle(center: Point(x: seed, y: -seed), radius: seed / 7))
                    } else {
                        layerShapes.append(
                            ModelRectangle(origin: Point(x: seed, y: seed / 3), size: Size(width: 4, height: seed)))
                    }
                }
                count += 1 + layerShapes.count
                pageLayers.append(ModelLayer(name: "page \(page) layer \(layer)", shapes: layerShapes))
            }
            if let previousFirstLayer { pageLayers.append(previousFirstLayer) }
            previousFirstLayer = pageLayers.first
            pageList.append(ModelPage(title: "page \(page)", layers: pageLayers))
            count += 1
        }
        contents = ModelContents(pages: pageList)
        objectCount = count
    }
}
