import SoundtrackContext
import SoundtrackEngine

/// A hand-written JSON encoder for picks: the same bytes as `pick.json(includeRanked:).serialized()`,
/// appended to a byte buffer without building a `JSONValue` tree.
public enum PickWriter {
    /// Appends the pick's JSON (no newline).
    /// - Parameters:
    ///   - pick: the pick.
    ///   - includeRanked: whether to write the `ranked` list (`--top K` with K > 1).
    ///   - out: the buffer to append to.
    public static func write(_ pick: Pick, includeRanked: Bool = false, into out: inout [UInt8]) {
        key("{\"pick_id\":", &out)
        JSONValue.writeString(pick.pickId, into: &out)
        key(",\"user\":", &out)
        JSONValue.writeString(pick.user, into: &out)
        key(",\"at\":", &out)
        JSONValue.writeString(pick.at.rfc3339, into: &out)
        key(",\"bin\":", &out)
        bin(pick.bin, created: true, &out)
        key(",\"track\":", &out)
        track(pick.track, &out)
        if includeRanked {
            key(",\"ranked\":[", &out)
            for (i, t) in pick.ranked.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                track(t, &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        key(",\"alternatives\":[", &out)
        for (i, a) in pick.alternatives.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            key("{\"bin\":", &out)
            bin(a.bin, created: false, &out)
            key(",\"tracks\":[", &out)
            for (j, t) in a.tracks.enumerated() {
                if j > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(t, into: &out)
            }
            key("]}", &out)
        }
        key("],\"why\":[", &out)
        for (i, w) in pick.why.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            key("{\"feature\":", &out)
            JSONValue.writeString(w.feature, into: &out)
            key(",\"weight\":", &out)
            JSONValue.writeNumber(round(w.weight), into: &out)
            key(",\"similarity\":", &out)
            JSONValue.writeNumber(round(w.similarity), into: &out)
            out.append(UInt8(ascii: "}"))
        }
        key("],\"source\":", &out)
        JSONValue.writeString(pick.source, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    @inline(__always)
    static func key(_ s: StaticString, _ out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    static func bin(_ b: Pick.BinSummary, created: Bool, _ out: inout [UInt8]) {
        key("{\"id\":", &out)
        JSONValue.writeString(b.id, into: &out)
        key(",\"label\":", &out)
        JSONValue.writeString(b.label, into: &out)
        key(",\"score\":", &out)
        JSONValue.writeNumber(round(b.score), into: &out)
        if created {
            key(b.created ? ",\"created\":true" : ",\"created\":false", &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    static func track(_ t: Pick.TrackSummary, _ out: inout [UInt8]) {
        key("{\"id\":", &out)
        JSONValue.writeString(t.id, into: &out)
        key(",\"title\":", &out)
        JSONValue.writeString(t.title, into: &out)
        key(",\"artist\":", &out)
        JSONValue.writeString(t.artist, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func round(_ x: Float) -> Double { (Double(x) * 1000).rounded() / 1000 }
}
