/// The `k` best of a stream of items, best first, kept in a caller's fixed buffer: the few-of-many
/// selections of a pick (its tracks, the slots of `why`) without sorting every candidate.
///
/// Items that compare equal keep the order they were offered in.
struct TopK<Item> {
    private let buffer: UnsafeMutableBufferPointer<Item>
    /// How many are kept so far (at most the buffer's count).
    private(set) var count = 0

    /// Keeps at most `buffer.count` items in `buffer` (uninitialized memory of a trivial type).
    init(buffer: UnsafeMutableBufferPointer<Item>) { self.buffer = buffer }

    /// Offers an item; it is kept if it comes `before` the worst kept one, or while there is room.
    @inline(__always)
    mutating func offer(_ item: Item, before: (Item, Item) -> Bool) {
        let k = buffer.count
        guard k > 0, count < k || before(item, buffer[count - 1]) else { return }
        var at = count < k ? count : k - 1
        while at > 0 && before(item, buffer[at - 1]) {
            buffer[at] = buffer[at - 1]
            at -= 1
        }
        buffer[at] = item
        if count < k { count += 1 }
    }

    /// The `i`-th best kept item.
    subscript(i: Int) -> Item { buffer[i] }

    /// The best `capacity` items of those `offerAll` offers, best first, each through `transform`:
    /// the buffer is a temporary allocation (on the stack when small), and the answer the only array.
    static func best<T>(capacity: Int, _ offerAll: (inout TopK<Item>) -> Void, _ transform: (Item) -> T) -> [T] {
        withUnsafeTemporaryAllocation(of: Item.self, capacity: capacity) { buffer in
            var top = TopK(buffer: buffer)
            offerAll(&top)
            return (0..<top.count).map { transform(top[$0]) }
        }
    }
}
