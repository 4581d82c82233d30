import Foundation
import GRDB
import SoundtrackContext
import SoundtrackEngine

/// The database schema as append-only migrations: never edit a registered migration, add one.
enum Schema {
    /// The identifier of the newest migration: the schema a database of this build has.
    static var latestMigration: String { migrator.migrations.last ?? "" }

    /// The schemas whose person exports this build imports: v17's (the first with exports),
    /// v18's (whose added columns, `sessions.style` and `style_since`, may be absent: NULL), v19's
    /// (the groups' listening sessions, whose memberships exports list and imports leave out) and
    /// v20's (whose added tables, `quizzes` and `quiz_players`, may be absent: no rows), v21's and
    /// v22's (which changed the community's tables and the catalog's index, none of a person's). A new
    /// migration joins the list only when a document of every schema listed imports unchanged
    /// into it (`PersonExportTests` imports a v17 document).
    static let importableMigrations = ["v17", "v18", "v19", "v20", "v21", "v22"]

    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (
                        id TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
                        email_hash TEXT CHECK (email_hash IS NULL OR length(email_hash) = 64),
                        age INTEGER CHECK (age IS NULL OR age BETWEEN 13 AND 120),
                        region TEXT CHECK (region IS NULL OR length(region) BETWEEN 1 AND 64),
                        created_at TEXT NOT NULL,
                        pick_counter INTEGER NOT NULL DEFAULT 0 CHECK (pick_counter >= 0),
                        next_bin_number INTEGER NOT NULL DEFAULT 1 CHECK (next_bin_number >= 1)
                    );
                    CREATE TABLE user_settings (
                        user_id TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        location_services INTEGER NOT NULL DEFAULT 1 CHECK (location_services IN (0, 1)),
                        volume_control INTEGER NOT NULL DEFAULT 0 CHECK (volume_control IN (0, 1)),
                        keep_raw_snapshots INTEGER NOT NULL DEFAULT 0 CHECK (keep_raw_snapshots IN (0, 1))
                    );
                    CREATE TABLE songs (
                        id TEXT PRIMARY KEY NOT NULL CHECK (length(id) >= 1),
                        title TEXT NOT NULL,
                        artist TEXT NOT NULL,
                        album TEXT,
                        year INTEGER CHECK (year IS NULL OR year BETWEEN 1000 AND 2100),
                        genres TEXT NOT NULL DEFAULT '',
                        duration_ms INTEGER CHECK (duration_ms IS NULL OR duration_ms > 0),
                        popularity INTEGER CHECK (popularity IS NULL OR popularity BETWEEN 0 AND 100),
                        tempo REAL CHECK (tempo IS NULL OR tempo BETWEEN 0 AND 300),
                        energy REAL CHECK (energy IS NULL OR energy BETWEEN 0 AND 1),
                        valence REAL CHECK (valence IS NULL OR valence BETWEEN 0 AND 1),
                        danceability REAL CHECK (danceability IS NULL OR danceability BETWEEN 0 AND 1),
                        acousticness REAL CHECK (acousticness IS NULL OR acousticness BETWEEN 0 AND 1),
                        instrumentalness REAL CHECK (instrumentalness IS NULL OR instrumentalness BETWEEN 0 AND 1),
                        speechiness REAL CHECK (speechiness IS NULL OR speechiness BETWEEN 0 AND 1),
                        loudness REAL CHECK (loudness IS NULL OR loudness BETWEEN -60 AND 5)
                    );
                    CREATE TABLE bins (
                        id INTEGER PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        number INTEGER NOT NULL CHECK (number >= 1),
                        label TEXT NOT NULL,
                        layout_version INTEGER NOT NULL,
                        centroid BLOB NOT NULL,
                        spread BLOB NOT NULL,
                        observed BLOB NOT NULL,
                        observations INTEGER NOT NULL CHECK (observations >= 1),
                        prior TEXT,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        UNIQUE (user_id, number),
                        CHECK (length(centroid) = length(spread) AND length(spread) = length(observed) AND length(centroid) % 4 = 0)
                    );
                    CREATE TABLE bin_songs (
                        bin_id INTEGER NOT NULL REFERENCES bins(id) ON DELETE CASCADE,
                        song_id TEXT NOT NULL REFERENCES songs(id) ON DELETE RESTRICT,
                        position INTEGER NOT NULL CHECK (position >= 0),
                        likes INTEGER NOT NULL DEFAULT 0 CHECK (likes >= 0),
                        dislikes INTEGER NOT NULL DEFAULT 0 CHECK (dislikes >= 0),
                        PRIMARY KEY (bin_id, song_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX bin_songs_song ON bin_songs(song_id);
                    CREATE TABLE weights (
                        user_id TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        layout_version INTEGER NOT NULL,
                        vector BLOB NOT NULL CHECK (length(vector) % 4 = 0)
                    );
                    CREATE TABLE places (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        id TEXT NOT NULL,
                        lat REAL NOT NULL CHECK (lat BETWEEN -90 AND 90),
                        lon REAL NOT NULL CHECK (lon BETWEEN -180 AND 180),
                        count INTEGER NOT NULL CHECK (count >= 1),
                        PRIMARY KEY (user_id, id)
                    );
                    CREATE TABLE sessions (
                        user_id TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        current_bin INTEGER,
                        dislike_streak INTEGER NOT NULL DEFAULT 0 CHECK (dislike_streak >= 0),
                        avoided TEXT NOT NULL DEFAULT '[]',
                        switched_to INTEGER,
                        last_at REAL,
                        recent_tracks TEXT NOT NULL DEFAULT '[]'
                    );
                    CREATE TABLE picks (
                        id TEXT PRIMARY KEY NOT NULL,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        seq INTEGER NOT NULL CHECK (seq >= 0),
                        at REAL NOT NULL,
                        bin_number INTEGER NOT NULL,
                        track_id TEXT NOT NULL,
                        layout_version INTEGER NOT NULL,
                        features BLOB NOT NULL,
                        mask BLOB NOT NULL,
                        ranking TEXT NOT NULL,
                        UNIQUE (user_id, seq)
                    );
                    CREATE TABLE feedback (
                        id TEXT PRIMARY KEY NOT NULL CHECK (length(id) >= 1),
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        at REAL NOT NULL,
                        track_id TEXT NOT NULL,
                        signal TEXT NOT NULL CHECK (signal IN ('like', 'dislike', 'skip', 'complete')),
                        played_ms INTEGER CHECK (played_ms IS NULL OR played_ms >= 0),
                        pick_id TEXT,
                        bin_number INTEGER NOT NULL,
                        switched_to INTEGER,
                        snapshot TEXT,
                        applied_seq INTEGER NOT NULL
                    );
                    CREATE INDEX feedback_user ON feedback(user_id, applied_seq);
                    """)
        }
        m.registerMigration("v2") { db in
            // API keys of the HTTP service: only a SHA-256 hash of each secret is kept.
            try db.execute(
                sql: """
                    CREATE TABLE api_keys (
                        id TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 4 AND 64),
                        hash TEXT NOT NULL UNIQUE CHECK (length(hash) = 64),
                        role TEXT NOT NULL CHECK (role IN ('user', 'admin')),
                        user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                        label TEXT CHECK (label IS NULL OR length(label) <= 128),
                        created_at TEXT NOT NULL,
                        revoked_at TEXT,
                        CHECK ((role = 'user') = (user_id IS NOT NULL))
                    );
                    CREATE INDEX api_keys_user ON api_keys(user_id);
                    """)
        }
        m.registerMigration("v3") { db in
            // Calendar events imported from ICS files (and fetched from Google Calendar), one row per
            // occurrence: times and the category; the title only when the user keeps raw snapshots.
            // The event key is a SHA-256 of the source's event id and the occurrence's start (UIDs
            // may carry email addresses). A user's library from a streaming service: which tracks,
            // from which list (saved, top, own playlists), so onboarding can start from real taste.
            try db.execute(
                sql: """
                    CREATE TABLE calendar_events (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        source TEXT NOT NULL CHECK (source IN ('ics', 'google')),
                        event_key TEXT NOT NULL CHECK (length(event_key) = 64),
                        start_at REAL NOT NULL,
                        end_at REAL NOT NULL CHECK (end_at >= start_at),
                        offset_s INTEGER NOT NULL CHECK (offset_s BETWEEN -86399 AND 86399),
                        all_day INTEGER NOT NULL CHECK (all_day IN (0, 1)),
                        category TEXT NOT NULL CHECK (category IN ('workout', 'study', 'work', 'social', 'travel', 'rest', 'other')),
                        title TEXT CHECK (title IS NULL OR length(title) <= 1024),
                        imported_at REAL NOT NULL,
                        PRIMARY KEY (user_id, source, event_key)
                    ) WITHOUT ROWID;
                    CREATE INDEX calendar_events_time ON calendar_events(user_id, start_at);
                    CREATE TABLE library_tracks (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        service TEXT NOT NULL CHECK (service IN ('spotify')),
                        list TEXT NOT NULL CHECK (list IN ('saved', 'top', 'playlist')),
                        track_id TEXT NOT NULL REFERENCES songs(id) ON DELETE RESTRICT,
                        rank INTEGER NOT NULL CHECK (rank >= 0),
                        added_at REAL,
                        imported_at REAL NOT NULL,
                        PRIMARY KEY (user_id, service, list, track_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX library_tracks_song ON library_tracks(track_id);
                    """)
        }
        // Foreign keys stay on (`.immediate`): nothing references `feedback`, and its copied rows
        // are checked as they are inserted. With GRDB's default (`.deferred`) the migration ran
        // with them off and then checked every foreign key of the database: 2.1 s on a population
        // of 10,000 users, most of it the 3.8 million memberships, none of which the migration touches.
        m.registerMigration("v4", foreignKeyChecks: .immediate) { db in
            // The same feedback table with `signal` checked by equalities instead of `IN (…)`: SQLite
            // evaluates a CHECK's IN list of more than two constants through an ephemeral table
            // that it builds again for every row inserted, which was 40 % of the cost of inserting
            // a feedback row (replay inserts hundreds of thousands). Rows keep their row ids.
            try db.execute(
                sql: """
                    CREATE TABLE feedback_v4 (
                        id TEXT PRIMARY KEY NOT NULL CHECK (length(id) >= 1),
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        at REAL NOT NULL,
                        track_id TEXT NOT NULL,
                        signal TEXT NOT NULL CHECK (signal = 'like' OR signal = 'dislike' OR signal = 'skip' OR signal = 'complete'),
                        played_ms INTEGER CHECK (played_ms IS NULL OR played_ms >= 0),
                        pick_id TEXT,
                        bin_number INTEGER NOT NULL,
                        switched_to INTEGER,
                        snapshot TEXT,
                        applied_seq INTEGER NOT NULL
                    );
                    INSERT INTO feedback_v4 (rowid, id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq)
                        SELECT rowid, id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq FROM feedback;
                    DROP TABLE feedback;
                    ALTER TABLE feedback_v4 RENAME TO feedback;
                    CREATE INDEX feedback_user ON feedback(user_id, applied_seq);
                    """)
        }
        m.registerMigration("v5", foreignKeyChecks: .immediate) { db in
            // Memberships lose their index by song. It served only SQLite's foreign-key check when a
            // song is deleted or its id changes, and the engine does neither: songs are only
            // inserted or upserted on their id. Every membership written paid for a second B-tree
            // (with 10,000 users, another 4 KiB page per replayed event): replay of 200,000 events
            // into that population took 10.2 s instead of 12.3 s without it.
            try db.execute(sql: "DROP INDEX IF EXISTS bin_songs_song")
        }
        m.registerMigration("v6", foreignKeyChecks: .immediate) { db in
            // A bin's songs move into the bin's row, as JSON text (``SongListCoding``): a changed bin
            // was its row plus rows of a second B-tree, two pages or more, and with 10,000 users a
            // replayed event rewrote a page of each. The view `bin_songs` keeps the memberships
            // readable as rows. What the foreign key and the CHECKs of the old table guarded (a known
            // track, counts ≥ 0, a song at most once per bin) the engine guarantees when it adds a
            // song, and ``Store/check()`` verifies.
            try db.execute(sql: "ALTER TABLE bins ADD COLUMN songs TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(songs))")
            let members = try RawStatement(db, "SELECT bin_id, song_id, likes, dislikes FROM bin_songs ORDER BY bin_id, position, song_id")
            let update = try RawStatement(db, "UPDATE bins SET songs = ? WHERE id = ?")
            var bin: Int64?
            var songs: [BinSong] = []
            func flush() throws {
                guard let bin, !songs.isEmpty else { return }
                try update.bind(1, utf8: SongListCoding.encode(songs))
                try update.bind(2, bin)
                try update.execute()
            }
            while try members.step() {
                let id = members.int64(0)
                if id != bin {
                    try flush()
                    bin = id
                    songs.removeAll(keepingCapacity: true)
                }
                songs.append(BinSong(trackId: members.text(1), likes: members.int(2), dislikes: members.int(3)))
            }
            try flush()
            try db.execute(
                sql: """
                    DROP TABLE bin_songs;
                    CREATE VIEW bin_songs AS
                        SELECT b.id AS bin_id, CAST(j.key AS INTEGER) AS position, json_extract(j.value, '$[0]') AS song_id,
                               json_extract(j.value, '$[1]') AS likes, json_extract(j.value, '$[2]') AS dislikes
                        FROM bins b, json_each(b.songs) j;
                    """)
        }
        m.registerMigration("v7", foreignKeyChecks: .immediate) { db in
            // Bins as online clusters, ratings, and feature layout v2 (docs/features.md):
            // - users: the vocabulary of the user's place and tag slots (names in slot order) and the
            //   merges of bins (a flat JSON array: merged bin, the bin it went into, …);
            // - bins: the mean time of the snapshots served and the session transitions to other
            //   bins (a flat JSON array: other bin, count, …);
            // - feedback: the `rate` signal with its 1-5 `rating` (the table is built again, as in v4,
            //   because a CHECK cannot be altered);
            // - the view `bin_songs` gains a song's rating (a fourth element of a song, when it has one);
            // - every stored vector of layout v1 moves to v2 by slot name (``LayoutMigration``).
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN place_names TEXT NOT NULL DEFAULT '[]';
                    ALTER TABLE users ADD COLUMN tag_names TEXT NOT NULL DEFAULT '[]';
                    ALTER TABLE users ADD COLUMN merged_into TEXT NOT NULL DEFAULT '[]';
                    ALTER TABLE bins ADD COLUMN mean_time REAL;
                    ALTER TABLE bins ADD COLUMN transitions TEXT NOT NULL DEFAULT '[]';
                    CREATE TABLE feedback_v7 (
                        id TEXT PRIMARY KEY NOT NULL CHECK (length(id) >= 1),
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        at REAL NOT NULL,
                        track_id TEXT NOT NULL,
                        signal TEXT NOT NULL CHECK (signal = 'like' OR signal = 'dislike' OR signal = 'skip' OR signal = 'complete' OR signal = 'rate'),
                        played_ms INTEGER CHECK (played_ms IS NULL OR played_ms >= 0),
                        pick_id TEXT,
                        bin_number INTEGER NOT NULL,
                        switched_to INTEGER,
                        snapshot TEXT,
                        applied_seq INTEGER NOT NULL,
                        rating INTEGER CHECK ((signal = 'rate') = (rating IS NOT NULL) AND (rating IS NULL OR rating BETWEEN 1 AND 5))
                    );
                    INSERT INTO feedback_v7 (rowid, id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq)
                        SELECT rowid, id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq FROM feedback;
                    DROP TABLE feedback;
                    ALTER TABLE feedback_v7 RENAME TO feedback;
                    CREATE INDEX feedback_user ON feedback(user_id, applied_seq);
                    DROP VIEW bin_songs;
                    CREATE VIEW bin_songs AS
                        SELECT b.id AS bin_id, CAST(j.key AS INTEGER) AS position, json_extract(j.value, '$[0]') AS song_id,
                               json_extract(j.value, '$[1]') AS likes, json_extract(j.value, '$[2]') AS dislikes,
                               json_extract(j.value, '$[3]') AS rating
                        FROM bins b, json_each(b.songs) j;
                    """)
            try migrateLayoutV1(db)
        }
        m.registerMigration("v8", foreignKeyChecks: .immediate) { db in
            // Keyed email hashes: which scheme made each user's `email_hash` (``EmailHashScheme``).
            // Every hash so far is the unkeyed SHA-256 of the address (`sha256`); new ones are
            // HMAC-SHA256 under the store's email key (`hmac-sha256`). A legacy hash cannot be
            // re-keyed without the address: it is replaced when the address is next supplied. The
            // CHECK holds for the rows as they are (SQLite checks the rows when a column with a CHECK
            // is added), so it does not require a scheme of every hash: a hash without one is SHA-256.
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN email_hash_scheme TEXT
                        CHECK (email_hash_scheme IS NULL OR (email_hash IS NOT NULL AND email_hash_scheme IN ('hmac-sha256', 'sha256')));
                    UPDATE users SET email_hash_scheme = 'sha256' WHERE email_hash IS NOT NULL;
                    """)
        }
        m.registerMigration("v9", foreignKeyChecks: .immediate) { db in
            // Settings of the whole store, by name: `email_key_fingerprint`, the fingerprint of the
            // email key the keyed hashes were made with (another key is refused, not used to make
            // hashes that match nothing stored).
            try db.execute(sql: "CREATE TABLE store_settings (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID")
        }
        m.registerMigration("v10", foreignKeyChecks: .immediate) { db in
            // The feedback events a user's stored state does not include yet (the state is a
            // checkpointed view of the feedback rows: docs/batch-and-replay.md, "The record and the
            // view"): each applied event as it came (the interchange format, its snapshot included),
            // so that loading the user applies it again; a write of the user's state deletes them.
            // A rowid table: new rows append at its end (an event is about a kilobyte, too big for
            // the keys of a WITHOUT ROWID table), found by user through the unique index.
            try db.execute(
                sql: """
                    CREATE TABLE pending_events (
                        id INTEGER PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        applied_seq INTEGER NOT NULL,
                        event TEXT NOT NULL,
                        UNIQUE (user_id, applied_seq)
                    )
                    """)
        }
        m.registerMigration("v11", foreignKeyChecks: .immediate) { db in
            // How far each user's stored state reaches: the `applied_seq` of the last pending event
            // it includes. A checkpoint of the view sets it in the transaction of the state instead
            // of deleting the user's pending rows there (a user's rows lie on pages shared with
            // other users' rows, so deleting them user by user rewrote each page once per user);
            // rows at or below it are no longer pending and are deleted later in the order written
            // (`Store.prunePending`). Rows kept until v10 were all pending: 0.
            try db.execute(sql: "ALTER TABLE users ADD COLUMN view_seq INTEGER NOT NULL DEFAULT 0 CHECK (view_seq >= 0)")
        }
        m.registerMigration("v12", foreignKeyChecks: .immediate) { db in
            // The blend of the track ranker as the deployment learns it (docs/scoring.md, "Learning
            // the blend"):
            // - blend_examples: the queries liked feedback events taught (``BlendExample``), made
            //   before each event was learned: `width` signals a candidate, the liked track's first,
            //   as little-endian Float32s; a sample of the log, the newest kept (``Store/pruneBlendExamples(keep:)``);
            // - ranker_blends: every blend fitted, promoted or not, with what judged it; the one in
            //   use is `store_settings.ranker_blend` (absent or 0: the models' own blend);
            // - sessions.tracks: the tracks the session's feedback was about (``SessionState/tracks``).
            try db.execute(
                sql: """
                    CREATE TABLE blend_examples (
                        id INTEGER PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        applied_seq INTEGER NOT NULL,
                        width INTEGER NOT NULL CHECK (width >= 1),
                        signals BLOB NOT NULL CHECK (length(signals) % (4 * width) = 0 AND length(signals) >= 8 * width),
                        UNIQUE (user_id, applied_seq)
                    );
                    ALTER TABLE sessions ADD COLUMN tracks TEXT NOT NULL DEFAULT '[]';
                    CREATE TABLE ranker_blends (
                        version INTEGER PRIMARY KEY CHECK (version >= 1),
                        created_at REAL NOT NULL,
                        weights TEXT NOT NULL CHECK (json_valid(weights)),
                        source TEXT NOT NULL,
                        events INTEGER NOT NULL CHECK (events >= 0),
                        training INTEGER NOT NULL CHECK (training >= 0),
                        validation INTEGER NOT NULL CHECK (validation >= 0),
                        ndcg REAL NOT NULL,
                        compared_with INTEGER NOT NULL CHECK (compared_with >= 0),
                        compared_ndcg REAL NOT NULL,
                        promoted INTEGER NOT NULL CHECK (promoted IN (0, 1)),
                        reason TEXT NOT NULL
                    );
                    """)
        }
        m.registerMigration("v13", foreignKeyChecks: .immediate) { db in
            // The community model kept current instead of rebuilt from the whole log by every
            // process that ranks (docs/architecture.md, "The community model"): `community` holds
            // what every process reads at once (every track's counts, the most liked, the scale,
            // the events counted, and `seq`: every feedback row up to it is counted); the rest is
            // read row by row as a pick needs it. `feedback.context` keeps the context attributes
            // an event was counted in, so that rows after `seq` are counted again exactly. A
            // database without a `community` row has its model rebuilt from the log once, by the
            // first process that ranks tracks, which writes it.
            try db.execute(
                sql: """
                    ALTER TABLE feedback ADD COLUMN context BLOB;
                    CREATE TABLE community (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        seq INTEGER NOT NULL CHECK (seq >= 0),
                        version INTEGER NOT NULL,
                        max_likes INTEGER NOT NULL,
                        max_raters INTEGER NOT NULL,
                        stats BLOB NOT NULL CHECK (length(stats) % 16 = 0),
                        top BLOB NOT NULL CHECK (length(top) % 4 = 0)
                    );
                    CREATE TABLE community_tracks (
                        row INTEGER PRIMARY KEY CHECK (row >= 0),
                        co_liked BLOB NOT NULL CHECK (length(co_liked) % 8 = 0),
                        co_rated BLOB NOT NULL CHECK (length(co_rated) % 8 = 0),
                        contexts BLOB NOT NULL CHECK (length(contexts) % 12 = 0)
                    );
                    CREATE TABLE community_tops (
                        attribute INTEGER PRIMARY KEY,
                        rows BLOB NOT NULL CHECK (length(rows) % 4 = 0)
                    );
                    CREATE TABLE community_people (
                        user_id TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        liked BLOB NOT NULL CHECK (length(liked) % 4 = 0),
                        rated BLOB NOT NULL CHECK (length(rated) % 4 = 0)
                    ) WITHOUT ROWID;
                    """)
        }
        m.registerMigration("v14") { db in
            // Learned place centres are kept at 0.001° (PlaceBook.precisionDegrees, about 100 m):
            // the centres stored before at full precision are coarsened in place.
            try db.execute(sql: "UPDATE places SET lat = round(lat, 3), lon = round(lon, 3)")
        }
        m.registerMigration("v15") { db in
            // What the person calls a learned place (soundtrack places name; PlaceBook).
            try db.execute(sql: "ALTER TABLE places ADD COLUMN name TEXT CHECK (name IS NULL OR length(name) BETWEEN 1 AND 64)")
        }
        m.registerMigration("v16") { db in
            // Whether the engine may read the person's calendar titles (UserSettings.calendarTitles).
            try db.execute(
                sql: "ALTER TABLE user_settings ADD COLUMN calendar_titles INTEGER NOT NULL DEFAULT 1 CHECK (calendar_titles IN (0, 1))")
        }
        m.registerMigration("v17") { db in
            // The catalog's similarity index in its stored form (CatalogIndex.storedForm, issue 40):
            // a process reads it instead of building the index from every song. The store writes it
            // with every catalog change; any other change of `songs` deletes it (these triggers), so
            // a stored index is always the index of the songs as they are.
            try db.execute(
                sql: """
                    CREATE TABLE catalog_index (
                        id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                        format INTEGER NOT NULL,
                        data BLOB NOT NULL
                    );
                    CREATE TRIGGER songs_insert_drops_index AFTER INSERT ON songs WHEN EXISTS (SELECT 1 FROM catalog_index)
                    BEGIN DELETE FROM catalog_index; END;
                    CREATE TRIGGER songs_update_drops_index AFTER UPDATE ON songs WHEN EXISTS (SELECT 1 FROM catalog_index)
                    BEGIN DELETE FROM catalog_index; END;
                    CREATE TRIGGER songs_delete_drops_index AFTER DELETE ON songs WHEN EXISTS (SELECT 1 FROM catalog_index)
                    BEGIN DELETE FROM catalog_index; END;
                    """)
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM songs)") == true { try Store.storeCatalogIndex(db) }
        }
        m.registerMigration("v18") { db in
            // The session's run of one style (SessionState.styleRun; docs/scoring.md, "No rut"): its
            // style hash and the time of its first pick, both NULL when there is none.
            try db.execute(
                sql: """
                    ALTER TABLE sessions ADD COLUMN style INTEGER;
                    ALTER TABLE sessions ADD COLUMN style_since REAL CHECK ((style IS NULL) = (style_since IS NULL));
                    """)
        }
        m.registerMigration("v19") { db in
            // Listening sessions of groups (docs/scoring.md, "Listening together"). A session holds
            // the shared context of its last pick (Rules.sharedContext: its `user` the session's
            // id, nothing of the sender's own), that pick's track, the tracks it played (newest
            // last) and whether most members skipped the current one; each member row when the
            // person was invited and joined (NULL: invited, not joined) and their vote on the
            // current track. A session that falls below two rows ends (the trigger), also when a
            // member is forgotten.
            // A person's export lists their memberships but an import does not write them: the
            // sessions are other people's too, and the person's feedback in them is in their own rows.
            try db.execute(
                sql: """
                    CREATE TABLE group_sessions (
                        id TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
                        created_at REAL NOT NULL,
                        snapshot TEXT,
                        track TEXT,
                        played TEXT NOT NULL DEFAULT '[]',
                        skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1))
                    );
                    CREATE TABLE group_members (
                        session_id TEXT NOT NULL REFERENCES group_sessions(id) ON DELETE CASCADE,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        invited_at REAL NOT NULL,
                        joined_at REAL,
                        vote TEXT CHECK (vote IS NULL OR vote IN ('like', 'skip')),
                        PRIMARY KEY (session_id, user_id)
                    );
                    CREATE INDEX group_members_by_user ON group_members(user_id);
                    CREATE TRIGGER group_session_ends_below_two AFTER DELETE ON group_members
                    WHEN (SELECT count(*) FROM group_members WHERE session_id = OLD.session_id) < 2
                    BEGIN DELETE FROM group_sessions WHERE id = OLD.session_id; END;
                    """)
        }
        m.registerMigration("v20") { db in
            // The music quiz (Quiz; docs/scoring.md, "Quiz"): a person's rounds, each with its
            // questions (as shown), its right answers and, once answered, the choices, the seconds
            // they counted as taking and the score; and a row a player: rounds issued (what numbers
            // and seeds the next) and the best score. Both keyed by the person first.
            try db.execute(
                sql: """
                    CREATE TABLE quiz_players (
                        user_id TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        issued INTEGER NOT NULL CHECK (issued >= 0),
                        best INTEGER CHECK (best IS NULL OR best >= 0),
                        best_quiz TEXT,
                        best_at REAL,
                        CHECK ((best IS NULL) = (best_quiz IS NULL) AND (best IS NULL) = (best_at IS NULL))
                    );
                    CREATE TABLE quizzes (
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        id TEXT NOT NULL CHECK (length(id) BETWEEN 1 AND 64),
                        number INTEGER NOT NULL CHECK (number >= 1),
                        issued_at REAL NOT NULL,
                        questions TEXT NOT NULL CHECK (json_valid(questions)),
                        answers TEXT NOT NULL CHECK (json_valid(answers)),
                        answered_at REAL,
                        choices TEXT CHECK (choices IS NULL OR json_valid(choices)),
                        seconds TEXT CHECK (seconds IS NULL OR json_valid(seconds)),
                        score INTEGER CHECK (score IS NULL OR score >= 0),
                        CHECK ((answered_at IS NULL) = (choices IS NULL) AND (answered_at IS NULL) = (seconds IS NULL)
                            AND (answered_at IS NULL) = (score IS NULL)),
                        PRIMARY KEY (user_id, id),
                        UNIQUE (user_id, number)
                    );
                    """)
        }
        m.registerMigration("v21") { db in
            // A track's co-likes, co-reactions and contexts in a table each (issue 40): in one row,
            // reading the co-reactions or the contexts walked the overflow pages of the columns
            // before them (tens of kilobytes a track on a large log), so a pick's contextual
            // popularity of 200 candidates paged in megabytes it did not use.
            try db.execute(
                sql: """
                    CREATE TABLE community_co_liked (
                        row INTEGER PRIMARY KEY CHECK (row >= 0),
                        co BLOB NOT NULL CHECK (length(co) % 8 = 0)
                    );
                    CREATE TABLE community_co_rated (
                        row INTEGER PRIMARY KEY CHECK (row >= 0),
                        co BLOB NOT NULL CHECK (length(co) % 8 = 0)
                    );
                    CREATE TABLE community_contexts (
                        row INTEGER PRIMARY KEY CHECK (row >= 0),
                        contexts BLOB NOT NULL CHECK (length(contexts) % 12 = 0)
                    );
                    INSERT INTO community_co_liked (row, co) SELECT row, co_liked FROM community_tracks;
                    INSERT INTO community_co_rated (row, co) SELECT row, co_rated FROM community_tracks;
                    INSERT INTO community_contexts (row, contexts) SELECT row, contexts FROM community_tracks;
                    DROP TABLE community_tracks;
                    """)
        }
        m.registerMigration("v22") { db in
            // The catalog's stored index in layout 2 (each id's hash kept, issue 40): a form of
            // layout 1 is not read, so the index is stored again once.
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM songs)") == true { try Store.storeCatalogIndex(db) }
        }
        return m
    }

    /// Rewrites the vectors of layout v1 (bins, weights, picks) in this build's layout.
    static func migrateLayoutV1(_ db: Database) throws {
        // New slots get the bundled models' values: the initial spread, the default weights.
        let config = try Models.bundled().config
        let spread = config.initialSpread
        let defaultWeight = config.defaultWeights
        func convert(_ blob: Data, fill: Float, table: String, column: String, row: Int64) throws -> Data {
            guard let v = LayoutMigration.fromV1(VectorCoding.decode(blob), fill: fill) else {
                throw StoreError.corrupt(table: table, column: column, row: row, expected: "\(LayoutMigration.v1Names.count) floats of layout v1")
            }
            return VectorCoding.encode(v)
        }
        for r in try Row.fetchAll(db, sql: "SELECT id, centroid, spread, observed FROM bins WHERE layout_version = 1") {
            let id: Int64 = r["id"]
            try db.execute(
                sql: "UPDATE bins SET layout_version = ?, centroid = ?, spread = ?, observed = ? WHERE id = ?",
                arguments: [
                    FeatureLayout.version, try convert(r["centroid"], fill: 0, table: "bins", column: "centroid", row: id),
                    try convert(r["spread"], fill: spread, table: "bins", column: "spread", row: id),
                    try convert(r["observed"], fill: 0, table: "bins", column: "observed", row: id), id
                ])
        }
        for r in try Row.fetchAll(db, sql: "SELECT rowid, user_id, vector FROM weights WHERE layout_version = 1") {
            let row: Int64 = r["rowid"]
            let old = VectorCoding.decode(r["vector"] as Data)
            guard old.count == LayoutMigration.v1Names.count else {
                throw StoreError.corrupt(table: "weights", column: "vector", row: row, expected: "\(LayoutMigration.v1Names.count) floats of layout v1")
            }
            var v = defaultWeight
            for (i, j) in LayoutMigration.v1ToCurrent.enumerated() {
                if let j { v[j] = old[i] }
            }
            try db.execute(
                sql: "UPDATE weights SET layout_version = ?, vector = ? WHERE rowid = ?",
                arguments: [FeatureLayout.version, VectorCoding.encode(v), row])
        }
        for r in try Row.fetchAll(db, sql: "SELECT rowid, features, mask FROM picks WHERE layout_version = 1") {
            let row: Int64 = r["rowid"]
            try db.execute(
                sql: "UPDATE picks SET layout_version = ?, features = ?, mask = ? WHERE rowid = ?",
                arguments: [
                    FeatureLayout.version, try convert(r["features"], fill: 0, table: "picks", column: "features", row: row),
                    try convert(r["mask"], fill: 0, table: "picks", column: "mask", row: row), row
                ])
        }
    }
}
