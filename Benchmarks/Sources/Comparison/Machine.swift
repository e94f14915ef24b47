import CLMDB
import Foundation
import GRDB

extension MachineInfo {
    /// Reads the machine's facts (Linux `/proc` and `/sys`; "unknown" where they are missing).
    static func current(workDirectory: String, commit: String) -> MachineInfo {
        func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        func field(_ text: String, _ name: String) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix(name) }
                .flatMap { $0.split(separator: ":", maxSplits: 1).last }
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let memoryKB = field(read("/proc/meminfo"), "MemTotal").flatMap { Int($0.split(separator: " ").first ?? "") }
        var names = utsname()
        uname(&names)
        let kernel = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let number = Int(Database.sqliteLibVersionNumber)
        let sqliteVersion = "\(number / 1_000_000).\(number / 1_000 % 1_000).\(number % 1_000)"
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return MachineInfo(
            date: formatter.string(from: Date()),
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            memory: memoryKB.map { String(format: "%.1f GiB", Double($0) / 1_048_576) } ?? "unknown",
            cpu: field(read("/proc/cpuinfo"), "model name") ?? "unknown",
            kernel: "Linux \(kernel)",
            disk: disk(of: workDirectory, mounts: read("/proc/mounts")),
            sqliteVersion: sqliteVersion,
            lmdbVersion: String(cString: mdb_version(nil, nil, nil)),
            commit: commit)
    }

    /// "ext4 on /dev/vda1 (virtio, not rotational)" for the mount that holds `path`.
    private static func disk(of path: String, mounts: String) -> String {
        var best: (mount: String, device: String, type: String) = ("", "unknown", "unknown")
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 3, path.hasPrefix(fields[1]), fields[1].count > best.mount.count else { continue }
            best = (fields[1], fields[0], fields[2])
        }
        var detail = ""
        if best.device.hasPrefix("/dev/") {
            var name = String(best.device.dropFirst(5))
            while let last = name.last, last.isNumber, !name.hasPrefix("nvme") || name.contains("p") {
                name.removeLast()
                if name.hasSuffix("p") && name.hasPrefix("nvme") {
                    name.removeLast()
                    break
                }
            }
            let rotational = (try? String(contentsOfFile: "/sys/block/\(name)/queue/rotational", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if let rotational { detail = rotational == "0" ? " (not rotational)" : " (rotational)" }
        }
        return "\(best.type) on \(best.device)\(detail), mounted at \(best.mount)"
    }
}
