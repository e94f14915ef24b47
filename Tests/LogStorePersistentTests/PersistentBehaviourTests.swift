import Foundation
import LogStorePersistent
import Observation
import TestSupport
import Testing

/// What the generated members do outside a store: Observation, `Codable`, metadata.
@Suite struct PersistentBehaviourTests {
    @Test func observableModelReportsChanges() throws {
        let note = Note()
        let changed = Changes()
        withObservationTracking {
            _ = note.text
        } onChange: {
            changed.count += 1
        }
        note.pinned = true
        #expect(changed.count == 0)
        note.text = "hello"
        #expect(changed.count == 1)
    }

    @Test func observableModelRoundTrips() throws {
        let directory = TemporaryStore("persistent-observable")
        var objects = try openModels(directory)
        let note = Note()
        note.text = "remember"
        let context = objects.makeContext()
        let id = try context.insert(note)
        try context.save()
        try objects.close()

        objects = try openModels(directory)
        let loaded = try #require(try objects.makeContext().object(id: id, as: Note.self))
        #expect(loaded.text == "remember" && !loaded.pinned)
    }

    @Test func codableUsesTheFieldNamesInOneContainer() throws {
        let habit = HabitTask(title: "read", every: 2, streak: 4)
        let data = try JSONEncoder().encode(habit)
        let keys = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]).keys
        #expect(Set(keys) == ["title", "done", "every", "streak"])
        let decoded = try JSONDecoder().decode(HabitTask.self, from: data)
        #expect(decoded.title == "read" && decoded.every == 2 && decoded.streak == 4 && !decoded.done)
        let defaulted = try JSONDecoder().decode(HabitTask.self, from: Data(#"{"title":"new"}"#.utf8))
        #expect(defaulted.every == 7 && defaulted.streak == 0 && !defaulted.done)
    }

    @Test func publicClassConformsToPersistentModel() {
        let label: any PersistentModel = PublicLabel()
        #expect(type(of: label).typeName == "PublicLabel")
        #expect(label.persistenceSlot == nil)
    }
}

/// A counter the observation callback can change.
private final class Changes: @unchecked Sendable {
    var count = 0
}
