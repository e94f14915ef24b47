import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// A registered subclass of a persistent class that encodes none of its own stored properties (it
/// forgot to override `encode(to:)`/`init(from:)`) is refused instead of silently losing them; one that
/// encodes them, or some of them, or declares them transient, is not.
@Suite struct SubclassEncodingTests {
    func isIncompleteEncoding(_ error: any Error, _ className: String, _ property: String) -> Bool {
        guard let error = error as? ObjectStoreError else { return false }
        return error.code == .incompleteEncoding && error.typeName == "test.\(className)"
            && error.message.contains("\(className) (a subclass of ") && error.message.contains("(\(property))")
    }

    @Test(arguments: [true, false])
    func aSubclassThatDoesNotOverrideTheEncodingIsRefused(usesFieldCoding: Bool) throws {
        let directory = TemporaryStore("forgetful-subclass")
        try withObjects(directory, types: vehicleTypes, tuning: ObjectStoreTuning(usesFieldCoding: usesFieldCoding)) {
            objects in
            let context = objects.makeContext()
            let car = ForgetfulCar(wheels: 4)
            car.brand = "Volvo"
            try context.setRoot(car, named: "car")
            #expect { try context.save() } throws: { isIncompleteEncoding($0, "ForgetfulCar", "brand") }
            // Every later save says so again; nothing was written.
            #expect { try context.save() } throws: { isIncompleteEncoding($0, "ForgetfulCar", "brand") }
            #expect(try objects.makeContext().count() == 0)
        }
    }

    @Test func aFieldCodableSubclassThatDoesNotOverrideEncodeFieldsIsRefused() throws {
        let directory = TemporaryStore("forgetful-fast-subclass")
        try withObjects(directory, types: vehicleTypes) { objects in
            let context = objects.makeContext()
            try context.insert(ForgetfulFastCar(wheels: 4))
            #expect { try context.save() } throws: { isIncompleteEncoding($0, "ForgetfulFastCar", "brand") }
        }
    }

    @Test func aSubclassThatOverridesTheEncodingRoundTripsItsFields() throws {
        let directory = TemporaryStore("overriding-subclass")
        try withObjects(directory, types: vehicleTypes) { objects in
            let context = objects.makeContext()
            try context.setRoot(Car(wheels: 3, brand: "Reliant"), named: "car")
            try context.save()
        }
        try withObjects(directory, types: vehicleTypes) { objects in
            let car = try #require(try objects.makeContext().root(named: "car", as: Car.self))
            #expect(car.brand == "Reliant")
            #expect(car.wheels == 3)
        }
    }

    @Test func aPartiallyEncodedSubclassIsNotRefused() throws {
        let directory = TemporaryStore("partial-subclass")
        try withObjects(directory, types: vehicleTypes) { objects in
            let context = objects.makeContext()
            let truck = Truck(wheels: 6, load: 2.5)
            truck.cachedLabel = "6 wheels, 2.5 t"
            try context.setRoot(truck, named: "truck")
            try context.save()
            let loaded = try #require(try objects.makeContext().root(named: "truck", as: Truck.self))
            #expect(loaded.load == 2.5)
            #expect(loaded.cachedLabel == "label not computed")
        }
    }

    @Test func aSubclassWhoseOwnPropertiesAreDeclaredTransientIsNotRefused() throws {
        let directory = TemporaryStore("transient-subclass")
        try withObjects(directory, types: vehicleTypes) { objects in
            let context = objects.makeContext()
            let vehicle = CachedVehicle(wheels: 2)
            vehicle.summary = "two wheels"
            try context.insert(vehicle)
            #expect(try context.save().written == 1)
        }
    }

    @Test func aNilOptionalPropertyLeavesTheCheckForALaterInstance() throws {
        let directory = TemporaryStore("optional-subclass")
        try withObjects(directory, types: vehicleTypes) { objects in
            let context = objects.makeContext()
            try context.insert(Bicycle(wheels: 2))  // bell is nil: nothing to tell
            #expect(try context.save().written == 1)
            let noisy = Bicycle(wheels: 2)
            noisy.bell = "ring"
            try context.insert(noisy)
            #expect { try context.save() } throws: { isIncompleteEncoding($0, "Bicycle", "bell") }
        }
    }
}
