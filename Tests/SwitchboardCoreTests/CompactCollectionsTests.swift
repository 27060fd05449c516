import Testing
import SwitchboardCore
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct CompactSetTests {
    @Test func behavesAsASetThroughEverySize() {
        var compact = CompactSet<Int>()
        var reference = Set<Int>()
        var generator = SeededNumbers(seed: 7)
        for _ in 0..<2_000 {
            let element = generator.next(below: 6)
            if generator.next(below: 2) == 0 {
                #expect(compact.insert(element) == reference.insert(element).inserted)
            } else {
                #expect(compact.remove(element) == reference.remove(element))
            }
            #expect(compact.count == reference.count)
            #expect(compact.isEmpty == reference.isEmpty)
            #expect(Set(compact) == reference)
            for probe in 0..<6 { #expect(compact.contains(probe) == reference.contains(probe)) }
        }
    }

    @Test func equalSetsAreEqualWhateverTheirHistory() {
        var grown: CompactSet<String> = ["a", "b", "c"]
        grown.remove("b")
        grown.remove("c")
        #expect(grown == ["a"])
        #expect(grown != [])
        #expect(CompactSet([1, 2, 2, 3]).count == 3)
    }

    @Test func aDictionaryOfSetsDropsASetWhenItsLastElementGoes() {
        var sets: [String: CompactSet<Int>] = [:]
        sets["x", default: []].insert(1)
        sets["x", default: []].insert(2)
        sets.remove(1, fromSetAt: "x")
        #expect(sets["x"] == [2])
        sets.remove(3, fromSetAt: "x")
        sets.remove(1, fromSetAt: "missing")
        #expect(sets.count == 1)
        sets.remove(2, fromSetAt: "x")
        #expect(sets.isEmpty)
    }

    /// Copying on each change would make these loops quadratic: minutes, not milliseconds.
    @Test(.timeLimit(.minutes(1))) func aSetInADictionaryChangesInPlace() async {
        var sets: [Int: CompactSet<Int>] = [:]
        for element in 0..<100_000 {
            await SharedExecutor.yield(atStep: element, every: 10_000)
            sets[0, default: []].insert(element)
        }
        #expect(sets[0]?.count == 100_000)
        for element in 0..<99_999 {
            await SharedExecutor.yield(atStep: element, every: 10_000)
            sets.remove(element, fromSetAt: 0)
        }
        #expect(sets[0] == [99_999])
    }
}

/// A small deterministic generator for the property tests of this target.
private struct SeededNumbers {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(below bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}

@Suite(.timeLimit(.minutes(2))) struct CompactDictionaryTests {
    @Test func behavesAsADictionaryThroughEverySize() {
        var compact = CompactDictionary<Int, Int>()
        var reference: [Int: Int] = [:]
        var generator = SeededNumbers(seed: 11)
        for step in 0..<3_000 {
            let key = generator.next(below: 5)
            switch generator.next(below: 4) {
            case 0:
                compact[key] = step
                reference[key] = step
            case 1:
                #expect(compact.removeValue(forKey: key) == reference.removeValue(forKey: key))
            case 2:
                compact[key, default: 0] += 1
                reference[key, default: 0] += 1
            default:
                compact[key]? *= 2
                reference[key]? *= 2
            }
            #expect(compact.count == reference.count)
            #expect(compact.isEmpty == reference.isEmpty)
            #expect(Dictionary(uniqueKeysWithValues: compact.map { ($0.key, $0.value) }) == reference)
            for probe in 0..<5 { #expect(compact[probe] == reference[probe]) }
        }
    }

    @Test func readingWithADefaultAddsNothing() {
        let compact: CompactDictionary<String, Int> = ["a": 1]
        #expect(compact["b", default: 7] == 7)
        #expect(compact.count == 1)
        #expect(Set(compact.keys) == ["a"] && compact.values == [1])
    }

    /// Copying on each change would make these loops quadratic: minutes, not milliseconds.
    @Test(.timeLimit(.minutes(1))) func aValueChangesInPlace() async {
        var tables: CompactDictionary<String, [Int]> = [:]
        for pass in 0..<4 {
            if pass == 2 { tables["other"] = [1] }
            for value in 0..<100_000 {
                await SharedExecutor.yield(atStep: value, every: 10_000)
                if pass.isMultiple(of: 2) { tables["only", default: []].append(value) } else { tables["only"]?.append(value) }
            }
        }
        #expect(tables["only"]?.count == 400_000)
        tables["only"] = nil
        #expect(tables.count == 1 && tables["other"] == [1])
    }
}
