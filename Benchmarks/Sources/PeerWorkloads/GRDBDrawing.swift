import Foundation
import GRDB
import LogStoreExamples

// The same drawing stored with GRDB Codable records, as a GRDB user would model it: one table per class,
// nested points and sizes flattened into columns, a join table for the layers of a page (a layer can be on
// two pages), shapes keyed by their layer and position.

struct ContentsRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "contents"
    var id: Int64
}

struct PageRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "page"
    var id: Int64
    var contentsId: Int64
    var position: Int
    var title: String
}

struct LayerRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "layer"
    var id: Int64
    var name: String
}

struct PageLayerRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "pageLayer"
    var pageId: Int64
    var position: Int
    var layerId: Int64
}

struct CircleRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "circle"
    var id: Int64
    var layerId: Int64
    var position: Int
    var centerX: Double
    var centerY: Double
    var radius: Double
}

struct RectangleRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "rectangle"
    var id: Int64
    var layerId: Int64
    var position: Int
    var originX: Double
    var originY: Double
    var width: Double
    var height: Double
}

/// Saving, loading and counting the drawing through GRDB.
public enum GRDBDrawing {
    /// Creates the tables and indexes.
    public static func createSchema(_ db: Database) throws {
        try db.create(table: "contents") { $0.primaryKey("id", .integer) }
        try db.create(table: "page") { table in
            table.primaryKey("id", .integer)
            table.column("contentsId", .integer).notNull().indexed()
            table.column("position", .integer).notNull()
            table.column("title", .text).notNull()
        }
        try db.create(table: "layer") { table in
            table.primaryKey("id", .integer)
            table.column("name", .text).notNull()
        }
        try db.create(table: "pageLayer") { table in
            table.column("pageId", .integer).notNull()
            table.column("position", .integer).notNull()
            table.column("layerId", .integer).notNull()
            table.primaryKey(["pageId", "position"])
        }
        for name in ["circle", "rectangle"] {
            try db.create(table: name) { table in
                table.primaryKey("id", .integer)
                table.column("layerId", .integer).notNull()
                table.column("position", .integer).notNull()
                if name == "circle" {
                    table.column("centerX", .double).notNull()
                    table.column("centerY", .double).notNull()
                    table.column("radius", .double).notNull()
                } else {
                    table.column("originX", .double).notNull()
                    table.column("originY", .double).notNull()
                    table.column("width", .double).notNull()
                    table.column("height", .double).notNull()
                }
            }
            try db.create(index: "\(name)Layer", on: name, columns: ["layerId", "position"])
        }
    }

    /// Inserts the whole graph in one transaction; returns the number of objects (rows of the object
    /// tables; join rows not counted).
    public static func save(_ contents: Contents, in queue: DatabaseQueue) throws -> Int {
        try queue.write { db in
            var nextID: Int64 = 1
            var layerIDs: [ObjectIdentifier: Int64] = [:]
            var objects = 0
            func newID() -> Int64 {
                defer { nextID += 1 }
                return nextID
            }
            let contentsID = newID()
            try ContentsRow(id: contentsID).insert(db)
            objects += 1
            for (pagePosition, page) in contents.pages.enumerated() {
                let pageID = newID()
                try PageRow(id: pageID, contentsId: contentsID, position: pagePosition, title: page.title).insert(db)
                objects += 1
                for (layerPosition, layer) in page.layers.enumerated() {
                    let layerID: Int64
                    if let known = layerIDs[ObjectIdentifier(layer)] {
                        layerID = known
                    } else {
                        layerID = newID()
                        layerIDs[ObjectIdentifier(layer)] = layerID
                        try LayerRow(id: layerID, name: layer.name).insert(db)
                        objects += 1
                        for (shapePosition, shape) in layer.shapes.enumerated() {
                            if let circle = shape as? Circle {
                                try CircleRow(
                                    id: newID(), layerId: layerID, position: shapePosition, centerX: circle.center.x,
                                    centerY: circle.center.y, radius: circle.radius
                                ).insert(db)
                            } else if let rectangle = shape as? Rectangle {
                                try RectangleRow(
                                    id: newID(), layerId: layerID, position: shapePosition,
                                    originX: rectangle.origin.x, originY: rectangle.origin.y,
                                    width: rectangle.size.width, height: rectangle.size.height
                                ).insert(db)
                            }
                            objects += 1
                        }
                    }
                    try PageLayerRow(pageId: pageID, position: layerPosition, layerId: layerID).insert(db)
                }
            }
            return objects
        }
    }

    /// Loads the whole graph back into the same classes (one instance per layer); returns it and the
    /// number of objects built.
    public static func load(from queue: DatabaseQueue) throws -> (Contents, Int) {
        try queue.read { db in
            var shapesByLayer: [Int64: [(Int, any Shape)]] = [:]
            var objects = 0
            for row in try CircleRow.fetchAll(db) {
                shapesByLayer[row.layerId, default: []].append(
                    (row.position, Circle(center: Point(x: row.centerX, y: row.centerY), radius: row.radius)))
                objects += 1
            }
            for row in try RectangleRow.fetchAll(db) {
                let rectangle = Rectangle(
                    origin: Point(x: row.originX, y: row.originY), size: Size(width: row.width, height: row.height))
                shapesByLayer[row.layerId, default: []].append((row.position, rectangle))
                objects += 1
            }
            var layers: [Int64: Layer] = [:]
            for row in try LayerRow.fetchAll(db) {
                let shapes = (shapesByLayer[row.id] ?? []).sorted { $0.0 < $1.0 }.map(\.1)
                layers[row.id] = Layer(name: row.name, shapes: shapes)
                objects += 1
            }
            var layersByPage: [Int64: [(Int, Layer)]] = [:]
            for row in try PageLayerRow.fetchAll(db) {
                if let layer = layers[row.layerId] {
                    layersByPage[row.pageId, default: []].append((row.position, layer))
                }
            }
            let pages = try PageRow.order(Column("position")).fetchAll(db).map { row in
                Page(title: row.title, layers: (layersByPage[row.id] ?? []).sorted { $0.0 < $1.0 }.map(\.1))
            }
            objects += pages.count
            _ = try ContentsRow.fetchOne(db)
            objects += 1
            return (Contents(pages: pages), objects)
        }
    }

    /// Fetches each (table, id) by primary key; returns how many were found.
    public static func loadRandom(_ sample: [(String, Int64)], from queue: DatabaseQueue) throws -> Int {
        try queue.read { db in
            var found = 0
            for (table, id) in sample {
                switch table {
                case "circle": if try CircleRow.fetchOne(db, key: id) != nil { found += 1 }
                case "rectangle": if try RectangleRow.fetchOne(db, key: id) != nil { found += 1 }
                case "layer": if try LayerRow.fetchOne(db, key: id) != nil { found += 1 }
                default: if try PageRow.fetchOne(db, key: id) != nil { found += 1 }
                }
            }
            return found
        }
    }

    /// Every object's table and id.
    public static func allObjects(in queue: DatabaseQueue) throws -> [(String, Int64)] {
        try queue.read { db in
            var all: [(String, Int64)] = []
            for table in ["page", "layer", "circle", "rectangle"] {
                for id in try Int64.fetchAll(db, sql: "SELECT id FROM \(table)") { all.append((table, id)) }
            }
            return all
        }
    }

    /// The rows of each object table (`SELECT COUNT(*)`).
    public static func counts(in queue: DatabaseQueue) throws -> [Int] {
        try queue.read { db in
            try ["contents", "page", "layer", "circle", "rectangle"].map { table in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
            }
        }
    }
}
