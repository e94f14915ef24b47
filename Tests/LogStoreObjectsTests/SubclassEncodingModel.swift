import LogStoreObjects

// Subclasses that do and do not encode their own stored properties (SubclassEncodingTests).

class Vehicle: PersistentObject {
    class var typeName: String { "test.Vehicle" }
    var wheels: Int

    init(wheels: Int) { self.wheels = wheels }
}

/// Forgets to override `encode(to:)` and `init(from:)`: compiles, inherits `Vehicle`'s, loses `brand`.
final class ForgetfulCar: Vehicle {
    override class var typeName: String { "test.ForgetfulCar" }
    var brand = "unknown"
}

/// Encodes its own field and calls `super`.
final class Car: Vehicle {
    override class var typeName: String { "test.Car" }
    var brand: String

    init(wheels: Int, brand: String) {
        self.brand = brand
        super.init(wheels: wheels)
    }

    private enum CodingKeys: String, CodingKey { case brand }

    required init(from decoder: any Decoder) throws {
        brand = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .brand)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(brand, forKey: .brand)
        try super.encode(to: encoder)
    }
}

/// Encodes `load` and leaves its cache out on purpose: partially encoded, not refused.
final class Truck: Vehicle {
    override class var typeName: String { "test.Truck" }
    var load: Double
    var cachedLabel = "label not computed"

    init(wheels: Int, load: Double) {
        self.load = load
        super.init(wheels: wheels)
    }

    private enum CodingKeys: String, CodingKey { case load }

    required init(from decoder: any Decoder) throws {
        load = try decoder.container(keyedBy: CodingKeys.self).decode(Double.self, forKey: .load)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(load, forKey: .load)
        try super.encode(to: encoder)
    }
}

/// Its only own stored property is transient, and it says so.
final class CachedVehicle: Vehicle, DeclaresTransientProperties {
    override class var typeName: String { "test.CachedVehicle" }
    static let transientProperties: Set<String> = ["summary"]
    var summary = "not computed"
}

/// Forgets to override, but its own property is optional: nil may rightly be absent.
final class Bicycle: Vehicle {
    override class var typeName: String { "test.Bicycle" }
    var bell: String?
}

/// A `FieldCodable` class whose subclass forgets to override `encodeFields(to:)` and `init(fields:)`.
class FastVehicle: PersistentObject, FieldCodable {
    class var typeName: String { "test.FastVehicle" }
    var wheels: Int

    init(wheels: Int) { self.wheels = wheels }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(wheels, for: "wheels")
    }

    required init(fields: FieldReader) throws {
        wheels = try fields.read(Int.self, for: "wheels")
    }
}

final class ForgetfulFastCar: FastVehicle {
    override class var typeName: String { "test.ForgetfulFastCar" }
    var brand = "unknown"
}

let vehicleTypes: [any PersistentObject.Type] = [
    Vehicle.self, ForgetfulCar.self, Car.self, Truck.self, CachedVehicle.self, Bicycle.self, FastVehicle.self,
    ForgetfulFastCar.self,
]
