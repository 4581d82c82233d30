extension PostgresSchema {
    /// The SQLite schema v22 on PostgreSQL 15, keyed for distribution by user.
    ///
    /// The types: SQLite's INTEGER is `bigint`, REAL `double precision`, BLOB `bytea`, TEXT `text`,
    /// and TEXT checked by `json_valid` is `json` (which keeps the text as written, as SQLite does).
    /// What SQLite keys by a global row id (`bins`, `pending_events`, `blend_examples`) is keyed by
    /// (user_id, id), the id from a sequence, unique still; what SQLite keys by an id the client
    /// chose (`picks`, `feedback`) is keyed by (user_id, id). The foreign keys between a person's
    /// tables carry `user_id` on both sides; those to shared tables (`songs`, `group_sessions`) are
    /// allowed to distributed tables, and no shared table points at a person's.
    ///
    /// SQLite's triggers are not here: a song's change deleting the stored index and a group session
    /// ending below two members are the PostgreSQL store's own statements, in the same transaction
    /// (Citus runs no trigger of a distributed table that writes elsewhere). Nor is `feedback.id`'s
    /// uniqueness across people: `event_ids` holds each id's owner, written with the feedback row.
    static let v1 = PostgresMigration(
        version: 1, summary: "the SQLite schema v22, keyed for distribution by user", sqliteSchema: "v22",
        sql: """
            CREATE TABLE users (
                user_id text NOT NULL PRIMARY KEY CHECK (length(user_id) BETWEEN 1 AND 128),
                email_hash text CHECK (email_hash IS NULL OR length(email_hash) = 64),
                age bigint CHECK (age IS NULL OR age BETWEEN 13 AND 120),
                region text CHECK (region IS NULL OR length(region) BETWEEN 1 AND 64),
                created_at text NOT NULL,
                pick_counter bigint NOT NULL DEFAULT 0 CHECK (pick_counter >= 0),
                next_bin_number bigint NOT NULL DEFAULT 1 CHECK (next_bin_number >= 1),
                place_names text NOT NULL DEFAULT '[]',
                tag_names text NOT NULL DEFAULT '[]',
                merged_into text NOT NULL DEFAULT '[]',
                email_hash_scheme text
                    CHECK (email_hash_scheme IS NULL OR (email_hash IS NOT NULL AND email_hash_scheme IN ('hmac-sha256', 'sha256'))),
                view_seq bigint NOT NULL DEFAULT 0 CHECK (view_seq >= 0)
            );
            CREATE TABLE user_settings (
                user_id text NOT NULL PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
                location_services bigint NOT NULL DEFAULT 1 CHECK (location_services IN (0, 1)),
                volume_control bigint NOT NULL DEFAULT 0 CHECK (volume_control IN (0, 1)),
                keep_raw_snapshots bigint NOT NULL DEFAULT 0 CHECK (keep_raw_snapshots IN (0, 1)),
                calendar_titles bigint NOT NULL DEFAULT 1 CHECK (calendar_titles IN (0, 1))
            );
            CREATE TABLE songs (
                id text NOT NULL PRIMARY KEY CHECK (length(id) >= 1),
                rowid bigserial NOT NULL,
                title text NOT NULL,
                artist text NOT NULL,
                album text,
                year bigint CHECK (year IS NULL OR year BETWEEN 1000 AND 2100),
                genres text NOT NULL DEFAULT '',
                duration_ms bigint CHECK (duration_ms IS NULL OR duration_ms > 0),
                popularity bigint CHECK (popularity IS NULL OR popularity BETWEEN 0 AND 100),
                tempo double precision CHECK (tempo IS NULL OR tempo BETWEEN 0 AND 300),
                energy double precision CHECK (energy IS NULL OR energy BETWEEN 0 AND 1),
                valence double precision CHECK (valence IS NULL OR valence BETWEEN 0 AND 1),
                danceability double precision CHECK (danceability IS NULL OR danceability BETWEEN 0 AND 1),
                acousticness double precision CHECK (acousticness IS NULL OR acousticness BETWEEN 0 AND 1),
                instrumentalness double precision CHECK (instrumentalness IS NULL OR instrumentalness BETWEEN 0 AND 1),
                speechiness double precision CHECK (speechiness IS NULL OR speechiness BETWEEN 0 AND 1),
                loudness double precision CHECK (loudness IS NULL OR loudness BETWEEN -60 AND 5)
            );
            CREATE INDEX songs_order ON songs (rowid);
            CREATE TABLE bins (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                id bigserial NOT NULL,
                number bigint NOT NULL CHECK (number >= 1),
                label text NOT NULL,
                layout_version bigint NOT NULL,
                centroid bytea NOT NULL,
                spread bytea NOT NULL,
                observed bytea NOT NULL,
                observations bigint NOT NULL CHECK (observations >= 1),
                prior text,
                created_at double precision NOT NULL,
                updated_at double precision NOT NULL,
                songs json NOT NULL DEFAULT '[]',
                mean_time double precision,
                transitions text NOT NULL DEFAULT '[]',
                PRIMARY KEY (user_id, id),
                UNIQUE (user_id, number),
                CHECK (length(centroid) = length(spread) AND length(spread) = length(observed) AND length(centroid) % 4 = 0)
            );
            CREATE VIEW bin_songs AS
                SELECT b.user_id, b.id AS bin_id, j.position - 1 AS position, j.song ->> 0 AS song_id,
                       (j.song ->> 1)::bigint AS likes, (j.song ->> 2)::bigint AS dislikes, (j.song ->> 3)::bigint AS rating
                FROM bins b CROSS JOIN LATERAL json_array_elements(b.songs) WITH ORDINALITY AS j (song, position);
            CREATE TABLE weights (
                user_id text NOT NULL PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
                layout_version bigint NOT NULL,
                vector bytea NOT NULL CHECK (length(vector) % 4 = 0)
            );
            CREATE TABLE places (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                id text NOT NULL,
                rowid bigserial NOT NULL,
                lat double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
                lon double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
                count bigint NOT NULL CHECK (count >= 1),
                name text CHECK (name IS NULL OR length(name) BETWEEN 1 AND 64),
                PRIMARY KEY (user_id, id)
            );
            CREATE TABLE sessions (
                user_id text NOT NULL PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
                current_bin bigint,
                dislike_streak bigint NOT NULL DEFAULT 0 CHECK (dislike_streak >= 0),
                avoided text NOT NULL DEFAULT '[]',
                switched_to bigint,
                last_at double precision,
                recent_tracks text NOT NULL DEFAULT '[]',
                tracks text NOT NULL DEFAULT '[]',
                style bigint,
                style_since double precision CHECK ((style IS NULL) = (style_since IS NULL))
            );
            CREATE TABLE picks (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                id text NOT NULL,
                seq bigint NOT NULL CHECK (seq >= 0),
                at double precision NOT NULL,
                bin_number bigint NOT NULL,
                track_id text NOT NULL,
                layout_version bigint NOT NULL,
                features bytea NOT NULL,
                mask bytea NOT NULL,
                ranking text NOT NULL,
                PRIMARY KEY (user_id, id),
                UNIQUE (user_id, seq)
            );
            -- Rule 5 tells a pick of another person from no pick: a lookup by id alone, on the error path.
            CREATE INDEX picks_by_id ON picks (id);
            CREATE TABLE feedback (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                id text NOT NULL CHECK (length(id) >= 1),
                rowid bigserial NOT NULL,
                at double precision NOT NULL,
                track_id text NOT NULL,
                signal text NOT NULL CHECK (signal IN ('like', 'dislike', 'skip', 'complete', 'rate')),
                played_ms bigint CHECK (played_ms IS NULL OR played_ms >= 0),
                pick_id text,
                bin_number bigint NOT NULL,
                switched_to bigint,
                snapshot text,
                applied_seq bigint NOT NULL,
                rating bigint CHECK ((signal = 'rate') = (rating IS NOT NULL) AND (rating IS NULL OR rating BETWEEN 1 AND 5)),
                context bytea,
                PRIMARY KEY (user_id, id)
            );
            CREATE INDEX feedback_user ON feedback (user_id, applied_seq);
            CREATE INDEX feedback_log ON feedback (rowid);
            CREATE TABLE event_ids (
                id text NOT NULL PRIMARY KEY CHECK (length(id) >= 1),
                user_id text NOT NULL
            );
            CREATE INDEX event_ids_user ON event_ids (user_id);
            CREATE TABLE api_keys (
                id text NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 4 AND 64),
                hash text NOT NULL UNIQUE CHECK (length(hash) = 64),
                role text NOT NULL CHECK (role IN ('user', 'admin')),
                user_id text,
                label text CHECK (label IS NULL OR length(label) <= 128),
                created_at text NOT NULL,
                revoked_at text,
                CHECK ((role = 'user') = (user_id IS NOT NULL))
            );
            CREATE INDEX api_keys_user ON api_keys (user_id);
            CREATE TABLE calendar_events (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                source text NOT NULL CHECK (source IN ('ics', 'google')),
                event_key text NOT NULL CHECK (length(event_key) = 64),
                start_at double precision NOT NULL,
                end_at double precision NOT NULL CHECK (end_at >= start_at),
                offset_s bigint NOT NULL CHECK (offset_s BETWEEN -86399 AND 86399),
                all_day bigint NOT NULL CHECK (all_day IN (0, 1)),
                category text NOT NULL CHECK (category IN ('workout', 'study', 'work', 'social', 'travel', 'rest', 'other')),
                title text CHECK (title IS NULL OR length(title) <= 1024),
                imported_at double precision NOT NULL,
                PRIMARY KEY (user_id, source, event_key)
            );
            CREATE INDEX calendar_events_time ON calendar_events (user_id, start_at);
            CREATE TABLE library_tracks (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                service text NOT NULL CHECK (service IN ('spotify')),
                list text NOT NULL CHECK (list IN ('saved', 'top', 'playlist')),
                track_id text NOT NULL REFERENCES songs (id) ON DELETE RESTRICT,
                rank bigint NOT NULL CHECK (rank >= 0),
                added_at double precision,
                imported_at double precision NOT NULL,
                PRIMARY KEY (user_id, service, list, track_id)
            );
            CREATE INDEX library_tracks_song ON library_tracks (track_id);
            CREATE TABLE store_settings (
                name text NOT NULL PRIMARY KEY,
                value text NOT NULL
            );
            CREATE TABLE pending_events (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                id bigserial NOT NULL,
                applied_seq bigint NOT NULL,
                event text NOT NULL,
                PRIMARY KEY (user_id, id),
                UNIQUE (user_id, applied_seq)
            );
            CREATE TABLE blend_examples (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                id bigserial NOT NULL,
                applied_seq bigint NOT NULL,
                width bigint NOT NULL CHECK (width >= 1),
                signals bytea NOT NULL CHECK (length(signals) % (4 * width) = 0 AND length(signals) >= 8 * width),
                PRIMARY KEY (user_id, id),
                UNIQUE (user_id, applied_seq)
            );
            CREATE TABLE ranker_blends (
                version bigint NOT NULL PRIMARY KEY CHECK (version >= 1),
                created_at double precision NOT NULL,
                weights json NOT NULL,
                source text NOT NULL,
                events bigint NOT NULL CHECK (events >= 0),
                training bigint NOT NULL CHECK (training >= 0),
                validation bigint NOT NULL CHECK (validation >= 0),
                ndcg double precision NOT NULL,
                compared_with bigint NOT NULL CHECK (compared_with >= 0),
                compared_ndcg double precision NOT NULL,
                promoted bigint NOT NULL CHECK (promoted IN (0, 1)),
                reason text NOT NULL
            );
            CREATE TABLE community (
                id bigint NOT NULL PRIMARY KEY CHECK (id = 1),
                seq bigint NOT NULL CHECK (seq >= 0),
                version bigint NOT NULL,
                max_likes bigint NOT NULL,
                max_raters bigint NOT NULL,
                stats bytea NOT NULL CHECK (length(stats) % 16 = 0),
                top bytea NOT NULL CHECK (length(top) % 4 = 0)
            );
            CREATE TABLE community_tops (
                attribute bigint NOT NULL PRIMARY KEY,
                rows bytea NOT NULL CHECK (length(rows) % 4 = 0)
            );
            CREATE TABLE community_people (
                user_id text NOT NULL PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
                liked bytea NOT NULL CHECK (length(liked) % 4 = 0),
                rated bytea NOT NULL CHECK (length(rated) % 4 = 0)
            );
            CREATE TABLE community_co_liked (
                row bigint NOT NULL PRIMARY KEY CHECK (row >= 0),
                co bytea NOT NULL CHECK (length(co) % 8 = 0)
            );
            CREATE TABLE community_co_rated (
                row bigint NOT NULL PRIMARY KEY CHECK (row >= 0),
                co bytea NOT NULL CHECK (length(co) % 8 = 0)
            );
            CREATE TABLE community_contexts (
                row bigint NOT NULL PRIMARY KEY CHECK (row >= 0),
                contexts bytea NOT NULL CHECK (length(contexts) % 12 = 0)
            );
            CREATE TABLE catalog_index (
                id bigint NOT NULL PRIMARY KEY CHECK (id = 1),
                format bigint NOT NULL,
                data bytea NOT NULL
            );
            CREATE TABLE group_sessions (
                id text NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
                created_at double precision NOT NULL,
                snapshot text,
                track text,
                played text NOT NULL DEFAULT '[]',
                skipped bigint NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1))
            );
            CREATE TABLE group_members (
                session_id text NOT NULL REFERENCES group_sessions (id) ON DELETE CASCADE,
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                invited_at double precision NOT NULL,
                joined_at double precision,
                vote text CHECK (vote IS NULL OR vote IN ('like', 'skip')),
                PRIMARY KEY (session_id, user_id)
            );
            CREATE INDEX group_members_by_user ON group_members (user_id);
            CREATE TABLE quiz_players (
                user_id text NOT NULL PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
                issued bigint NOT NULL CHECK (issued >= 0),
                best bigint CHECK (best IS NULL OR best >= 0),
                best_quiz text,
                best_at double precision,
                CHECK ((best IS NULL) = (best_quiz IS NULL) AND (best IS NULL) = (best_at IS NULL))
            );
            CREATE TABLE quizzes (
                user_id text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
                id text NOT NULL CHECK (length(id) BETWEEN 1 AND 64),
                number bigint NOT NULL CHECK (number >= 1),
                issued_at double precision NOT NULL,
                questions json NOT NULL,
                answers json NOT NULL,
                answered_at double precision,
                choices json,
                seconds json,
                score bigint CHECK (score IS NULL OR score >= 0),
                CHECK ((answered_at IS NULL) = (choices IS NULL) AND (answered_at IS NULL) = (seconds IS NULL)
                    AND (answered_at IS NULL) = (score IS NULL)),
                PRIMARY KEY (user_id, id),
                UNIQUE (user_id, number)
            );
            """)
}
