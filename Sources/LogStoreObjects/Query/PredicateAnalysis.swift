import Foundation
import LogStore

/// One condition on a field that an index can answer: `field op value`.
struct FieldCondition {
    enum Operator {
        case equal, less, lessOrEqual, greater, greaterOrEqual, prefix
    }
    nonisolated(unsafe) let keyPath: AnyKeyPath
    let op: Operator
    let value: IndexValue
}

/// What a predicate says that an index can use: the conditions of its top-level conjunction that compare
/// a field of the object with a constant, and whether those conditions are all it says.
struct PredicateAnalysis {
    var conditions: [FieldCondition] = []
    /// Whether the predicate is exactly the conjunction of ``conditions``.
    var isComplete = true

    init<T>(_ predicate: Predicate<T>?) {
        guard let predicate else { return }
        if let expression = predicate.expression as? any AnalyzableExpression {
            isComplete = expression.collect(into: &conditions)
        } else {
            isComplete = false
        }
    }
}

/// A predicate expression whose conditions on fields can be read.
protocol AnalyzableExpression {
    /// Adds the conditions it holds; returns whether they are all it says.
    func collect(into conditions: inout [FieldCondition]) -> Bool
}

/// `$0.field`: a key path applied to the predicate's variable.
protocol FieldOperand {
    var fieldKeyPath: AnyKeyPath? { get }
}

/// A constant of the predicate.
protocol ConstantOperand {
    var constantIndexValue: IndexValue? { get }
}

extension PredicateExpressions.Variable: AnalyzableVariable {}
/// The predicate's variable (`$0`).
protocol AnalyzableVariable {}

extension PredicateExpressions.KeyPath: FieldOperand {
    var fieldKeyPath: AnyKeyPath? { root is any AnalyzableVariable ? keyPath : nil }
}

extension PredicateExpressions.Value: ConstantOperand {
    var constantIndexValue: IndexValue? { (value as? any IndexableValue)?.indexValue }
}

extension PredicateExpressions.Conjunction: AnalyzableExpression {
    func collect(into conditions: inout [FieldCondition]) -> Bool {
        let left = (lhs as? any AnalyzableExpression)?.collect(into: &conditions) ?? false
        let right = (rhs as? any AnalyzableExpression)?.collect(into: &conditions) ?? false
        return left && right
    }
}

extension PredicateExpressions.Equal: AnalyzableExpression {
    func collect(into conditions: inout [FieldCondition]) -> Bool {
        comparison(lhs, rhs, .equal, .equal, into: &conditions)
    }
}

extension PredicateExpressions.Comparison: AnalyzableExpression {
    func collect(into conditions: inout [FieldCondition]) -> Bool {
        let (direct, swapped): (FieldCondition.Operator, FieldCondition.Operator) =
            switch op {
            case .lessThan: (.less, .greater)
            case .lessThanOrEqual: (.lessOrEqual, .greaterOrEqual)
            case .greaterThan: (.greater, .less)
            case .greaterThanOrEqual: (.greaterOrEqual, .lessOrEqual)
            @unknown default: (.equal, .equal)
            }
        if case .equal = direct { return false }
        return comparison(lhs, rhs, direct, swapped, into: &conditions)
    }
}

extension PredicateExpressions.SequenceStartsWith: AnalyzableExpression {
    func collect(into conditions: inout [FieldCondition]) -> Bool {
        guard let keyPath = (base as? any FieldOperand)?.fieldKeyPath,
            let value = (prefix as? any ConstantOperand)?.constantIndexValue, case .string = value
        else { return false }
        conditions.append(FieldCondition(keyPath: keyPath, op: .prefix, value: value))
        return true
    }
}

/// `field op constant` or `constant op field` (then `swapped` applies).
private func comparison(
    _ lhs: Any, _ rhs: Any, _ direct: FieldCondition.Operator, _ swapped: FieldCondition.Operator,
    into conditions: inout [FieldCondition]
) -> Bool {
    if let keyPath = (lhs as? any FieldOperand)?.fieldKeyPath,
        let value = (rhs as? any ConstantOperand)?.constantIndexValue
    {
        conditions.append(FieldCondition(keyPath: keyPath, op: direct, value: value))
        return true
    }
    if let keyPath = (rhs as? any FieldOperand)?.fieldKeyPath,
        let value = (lhs as? any ConstantOperand)?.constantIndexValue
    {
        conditions.append(FieldCondition(keyPath: keyPath, op: swapped, value: value))
        return true
    }
    return false
}
