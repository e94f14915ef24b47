import LogStoreExamples
import LogStoreObjects

// The drawing model itself is the tool's (`DrawingModel.swift` links to
// `Sources/logstore-tool/DrawingModel.swift`), so the tests check the classes the demo stores.

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
