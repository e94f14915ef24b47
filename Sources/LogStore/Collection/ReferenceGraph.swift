/// A directed graph on nodes `0..<nodeCount` (objects, and edges from an object to those it refers to),
/// stored compactly, with its strongly connected components.
package struct ReferenceGraph {
    /// Number of nodes.
    package let nodeCount: Int
    /// The targets of node `n` are `targets[starts[n]..<starts[n + 1]]`.
    private var starts: [Int]
    private var targets: [Int] = []

    /// A graph with `nodeCount` nodes; add their edges with ``addNode(edges:)``, node by node in order.
    package init(nodeCount: Int) {
        self.nodeCount = nodeCount
        starts = [0]
        starts.reserveCapacity(nodeCount + 1)
    }

    /// Adds the edges of the next node.
    package mutating func addNode(edges: some Sequence<Int>) {
        targets.append(contentsOf: edges)
        starts.append(targets.count)
    }

    /// The strongly connected components, dependencies first: every edge goes from a component to
    /// itself or to one listed before it. Each component's nodes are in increasing order; the search
    /// starts from the nodes in order, so when every edge goes to an earlier node, node order is kept.
    ///
    /// Tarjan's algorithm with an explicit stack, so deep chains cannot overflow the call stack.
    package func stronglyConnectedComponents() -> [[Int]] {
        // An internal invariant (its users, import and salvage, add every node), not something input can break.
        assert(starts.count == nodeCount + 1, "every node's edges must be added")
        var order = [Int](repeating: -1, count: nodeCount)
        var low = [Int](repeating: 0, count: nodeCount)
        var onStack = [Bool](repeating: false, count: nodeCount)
        var stack: [Int] = []
        // The depth-first path: each node with the position of the next edge to follow.
        var path: [(node: Int, nextEdge: Int)] = []
        var visited = 0
        var components: [[Int]] = []

        for start in 0..<nodeCount where order[start] < 0 {
            order[start] = visited
            low[start] = visited
            visited += 1
            stack.append(start)
            onStack[start] = true
            path.append((start, starts[start]))
            while let (node, edge) = path.last {
                if edge < starts[node + 1] {
                    path[path.count - 1].nextEdge = edge + 1
                    let target = targets[edge]
                    if order[target] < 0 {
                        order[target] = visited
                        low[target] = visited
                        visited += 1
                        stack.append(target)
                        onStack[target] = true
                        path.append((target, starts[target]))
                    } else if onStack[target] {
                        low[node] = min(low[node], order[target])
                    }
                    continue
                }
                path.removeLast()
                if let parent = path.last?.node { low[parent] = min(low[parent], low[node]) }
                guard low[node] == order[node] else { continue }
                var component: [Int] = []
                while let member = stack.popLast() {
                    onStack[member] = false
                    component.append(member)
                    if member == node { break }
                }
                components.append(component.sorted())
            }
        }
        return components
    }
}
