import SoundtrackContext
import SoundtrackEngine

/// The wire encoder of picks, for the HTTP service and batch: the same bytes as
/// `pick.json(includeRanked:).serialized()`, appended to a ``ByteArena`` without building a
/// `JSONValue` tree (SWAR string escaping, fixed three-decimal numbers).
public enum PickEncoder {
    /// Appends the pick's JSON (no newline).
    /// - Parameters:
    ///   - pick: the pick.
    ///   - includeRanked: whether to write the `ranked` list (`--top K` with K > 1).
    ///   - out: the buffer to append to.
    public static func write(_ pick: Pick, includeRanked: Bool = false, into out: ByteArena) {
        out.append("{\"pick_id\":")
        out.appendJSONString(pick.pickId)
        out.append(",\"user\":")
        out.appendJSONString(pick.user)
        out.append(",\"at\":")
        out.appendRFC3339String(pick.at)
        out.append(",\"bin\":")
        bin(pick.bin, created: true, out)
        out.append(",\"track\":")
        track(pick.track, out)
        if includeRanked {
            out.append(",\"ranked\":[")
            for (i, t) in pick.ranked.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                track(t, out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(",\"alternatives\":[")
        for (i, a) in pick.alternatives.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append("{\"bin\":")
            bin(a.bin, created: false, out)
            out.append(",\"tracks\":[")
            for (j, t) in a.tracks.enumerated() {
                if j > 0 { out.append(UInt8(ascii: ",")) }
                out.appendJSONString(t)
            }
            out.append("]}")
        }
        out.append("],\"why\":[")
        for (i, w) in pick.why.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append("{\"feature\":")
            out.appendJSONString(w.feature)
            out.append(",\"weight\":")
            out.appendMilli(w.weight)
            out.append(",\"similarity\":")
            out.appendMilli(w.similarity)
            out.append(UInt8(ascii: "}"))
        }
        out.append("],\"source\":")
        out.appendJSONString(pick.source)
        out.append(",\"track_why\":[")
        for (i, w) in pick.signals.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append("{\"signal\":")
            out.appendJSONString(w.name)
            out.append(",\"contribution\":")
            out.appendMilli(w.contribution)
            out.append(UInt8(ascii: "}"))
        }
        out.append("],\"blend\":")
        out.appendDigits(UInt64(max(0, pick.blend)))
        if let volume = pick.volume {
            out.append(",\"volume\":")
            out.appendMilli(volume)
        }
        if pick.locationOff { out.append(",\"location\":\"off\"") }
        out.append(UInt8(ascii: "}"))
    }

    static func bin(_ b: Pick.BinSummary, created: Bool, _ out: ByteArena) {
        out.append("{\"id\":")
        out.appendJSONString(b.id)
        out.append(",\"label\":")
        out.appendJSONString(b.label)
        out.append(",\"score\":")
        out.appendMilli(b.score)
        if created {
            out.append(b.created ? ",\"created\":true" : ",\"created\":false")
        }
        out.append(UInt8(ascii: "}"))
    }

    static func track(_ t: Pick.TrackSummary, _ out: ByteArena) {
        out.append("{\"id\":")
        out.appendJSONString(t.id)
        out.append(",\"title\":")
        out.appendJSONString(t.title)
        out.append(",\"artist\":")
        out.appendJSONString(t.artist)
        out.append(UInt8(ascii: "}"))
    }
}
