import LogStoreExamples
import LogStoreObjects

/// The drawing model scaled up: `pages` pages × `layersPerPage` layers × `shapesPerLayer` shapes (half
/// circles, half rectangles), every page's first layer shared with the next page.
public struct ScaledDrawing {
    /// The root of the graph.
    public let contents: Contents
    /// Objects in the graph: the contents, pages, layers and shapes.
    public let objectCount: Int
    /// Shapes in the graph.
    public let shapeCount: Int

    /// Builds the graph in memory.
    public init(pages: Int, layersPerPage: Int, shapesPerLayer: Int) {
        var pageList: [Page] = []
        var shapes = 0
        var layers = 0
        var previousFirstLayer: Layer?
        for page in 0..<pages {
            var pageLayers: [Layer] = []
            for layer in 0..<layersPerPage {
                var layerShapes: [any Shape] = []
                for index in 0..<shapesPerLayer {
                    let seed = Double(page * 1_000 + layer * 10 + index)
                    if index % 2 == 0 {
                        layerShapes.append(Circle(center: Point(x: seed, y: -seed), radius: seed / 7))
                    } else {
                        layerShapes.append(
                            Rectangle(origin: Point(x: seed, y: seed / 3), size: Size(width: 4, height: seed)))
                    }
                }
                shapes += layerShapes.count
                layers += 1
                pageLayers.append(Layer(name: "page \(page) layer \(layer)", shapes: layerShapes))
            }
            if let previousFirstLayer { pageLayers.append(previousFirstLayer) }
            previousFirstLayer = pageLayers.first
            pageList.append(Page(title: "page \(page)", layers: pageLayers))
        }
        contents = Contents(pages: pageList)
        objectCount = 1 + pages + layers + shapes
        shapeCount = shapes
    }

    /// The objects reachable from `contents` (itself included; a shared layer counted once).
    public static func reachableCount(_ contents: Contents?) -> Int {
        guard let contents else { return 0 }
        var reached = 1
        var seenLayers = Set<ObjectIdentifier>()
        for page in contents.pages {
            reached += 1
            for layer in page.layers where seenLayers.insert(ObjectIdentifier(layer)).inserted {
                reached += 1 + layer.shapes.count
            }
        }
        return reached
    }
}
