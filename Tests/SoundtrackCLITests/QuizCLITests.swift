import Foundation
import GRDB
import SoundtrackContext
import SoundtrackTestSupport
import Testing

/// `soundtrack quiz` (issue 43, item 5): a round played on a real terminal (a pseudo-terminal,
/// driven by Python's `pty`), through standard input, and as JSON with `--answers`; bad input
/// named, with exit status 2.
@Suite(.serialized) struct QuizCLITests {
    /// A database with the demo's history (user `demo`: five bins, a few dozen likes) and a user
    /// `u-2` without any.
    static func database() async throws -> (dir: URL, db: String) {
        let dir = CLI.tempDir()
        let db = dir.appendingPathComponent("q.sqlite").path
        var r = try await CLI.run(["demo", "--days", "3", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        r = try await CLI.run(["users", "add", "u-2", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        return (dir, db)
    }

    /// The newest round of a person as stored: its id, right answers and score (nil before answered).
    static func newestRound(_ db: String, user: String = "demo") throws -> (id: String, answers: [Int], score: Int?) {
        try DatabaseQueue(path: db).read { d in
            let row = try #require(try Row.fetchOne(d, sql: "SELECT id, answers, score FROM quizzes WHERE user_id = ? ORDER BY number DESC LIMIT 1", arguments: [user]))
            guard case let .array(items) = try JSONParser.parse(row["answers"] as String) else { return (row["id"], [], nil) }
            return (row["id"], items.compactMap { if case let .number(x) = $0 { Int(x) } else { nil } }, row["score"])
        }
    }

    /// Drives `soundtrack quiz USER --db DB` on a pseudo-terminal: at each prompt it reads the
    /// round's right answers from the database and types them (after one bad answer first), then
    /// prints what the terminal showed and `EXIT <status>`.
    static let driver = #"""
        import os, pty, select, sqlite3, sys, time, json
        binary, db, user = sys.argv[1:4]
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(binary, [binary, "quiz", user, "--db", db])
        shown = b""
        def wait_for(token, count):
            global shown
            deadline = time.time() + 120
            while shown.count(token) < count:
                if time.time() > deadline:
                    sys.stdout.write(shown.decode("utf-8", "replace"))
                    sys.exit("timed out waiting for %r" % token)
                ready, _, _ = select.select([fd], [], [], 0.5)
                if ready:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        break
                    shown += chunk
        prompt = b"Your answer (1-4): "
        wait_for(prompt, 1)
        answers = json.loads(sqlite3.connect(db).execute(
            "SELECT answers FROM quizzes WHERE user_id = ? ORDER BY number DESC LIMIT 1", (user,)).fetchone()[0])
        os.write(fd, b"7\r")
        wait_for(prompt, 2)
        for i, a in enumerate(answers):
            os.write(fd, b"%d\r" % a)
            wait_for(prompt if i + 1 < len(answers) else b"Best: ", i + 3 if i + 1 < len(answers) else 1)
        wait_for(b"\0", 1)  # to the end of the output
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(shown.decode("utf-8", "replace"))
        sys.stdout.write("\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
        """#

    @Test("Played on a terminal: questions with choices 1-4, a bad answer named and asked again, right answers scored, the score and the best")
    func onATerminal() async throws {
        let (dir, db) = try await Self.database()
        let script = dir.appendingPathComponent("drive.py")
        try Data(Self.driver.utf8).write(to: script)
        let p = try Child(URL(fileURLWithPath: "/usr/bin/python3"), arguments: [script.path, CLI.executable.path, db, "demo"])
        let (o, e) = await offPool {
            let (o, e) = p.readToEnd()
            p.waitUntilExit()
            return (String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
        }
        #expect(p.terminationStatus == 0, "\(e)\n\(o)")
        let screen = o.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(screen.contains("EXIT 0"), "\(screen)")
        #expect(screen.contains("Quiz qz-") && screen.contains("Question 1 of 5: ") && screen.contains("Question 5 of 5: "), "\(screen)")
        #expect(screen.contains("Which of these songs did you like in “") || screen.contains("Where do you usually hear “"), "\(screen)")
        #expect(screen.contains("  1) ") && screen.contains("  4) "), "\(screen)")
        // The terminal echoed what was typed; the bad answer was named and asked again.
        #expect(screen.contains("Your answer (1-4): 7\n  answers[0]: expected a choice 1, 2, 3 or 4, got \"7\"\nYour answer (1-4): "), "\(screen)")
        #expect(screen.components(separatedBy: "Right! +").count - 1 == 5, "\(screen)")
        let round = try Self.newestRound(db)
        let score = try #require(round.score)
        #expect(screen.contains("Score: \(score) points, 5 of 5 right. Best: \(score) (a new best)."), "\(screen)")
        #expect(score > 2500 && score <= 5000)
    }

    @Test("--json issues a round without its answers; --answers grades it once, another person cannot answer it")
    func jsonAndAnswers() async throws {
        let (_, db) = try await Self.database()
        var r = try await CLI.run(["quiz", "demo", "--json", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        let round = try JSONParser.parse(r.stdout)
        let stored = try Self.newestRound(db)
        #expect(round["quiz"] == .string(stored.id) && round["user"] == .string("demo") && round["time_limit_seconds"] == .number(20))
        guard case let .array(questions)? = round["questions"] else { throw NoQuestions() }
        #expect(questions.count == 5 && !r.stdout.contains("\"answer\""))
        // Another person (here without a history of their own) cannot answer it.
        r = try await CLI.run(["quiz", "u-2", "--answers", "\(stored.id):1,2,3,4,1", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("error: quiz: expected a quiz round issued to user 'u-2'"), "\(r.stderr)")
        // Its person can, once: one wrong answer.
        var choices = stored.answers
        choices[1] = choices[1] % 4 + 1
        r = try await CLI.run(["quiz", "demo", "--answers", "\(stored.id):" + choices.map(String.init).joined(separator: ","), "--json", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        let outcome = try JSONParser.parse(r.stdout)
        #expect(outcome["correct"] == .number(4) && outcome["new_best"] == .bool(true), "\(r.stdout)")
        guard case let .array(results)? = outcome["results"] else { throw NoQuestions() }
        #expect(results[1]["points"] == .number(0) && results[1]["correct"] == .bool(false))
        #expect(outcome["score"] == .number(Double(try #require(try Self.newestRound(db).score))))
        r = try await CLI.run(["quiz", "demo", "--answers", "\(stored.id):" + choices.map(String.init).joined(separator: ","), "--db", db])
        #expect(r.status == 2 && r.stderr.contains("error: quiz: expected a quiz round not answered yet"), "\(r.stderr)")
        // The text form of a second round.
        r = try await CLI.run(["quiz", "demo", "--json", "--db", db])
        let second = try Self.newestRound(db)
        r = try await CLI.run(["quiz", "demo", "--answers", "\(second.id):" + second.answers.map(String.init).joined(separator: ","), "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("\(second.id): 5 of 5 right\n  1  \(second.answers[0])  right  "), "\(r.stdout)")
        #expect(r.stdout.contains("Score: ") && r.stdout.contains("Best: "), "\(r.stdout)")
    }

    @Test("Played through standard input: a line an answer; the end of the input names the question's field")
    func throughStandardInput() async throws {
        let (_, db) = try await Self.database()
        var r = try await CLI.run(["quiz", "demo", "--db", db], stdin: "1\n2\n3\n4\n1\n")
        #expect(r.status == 0, "\(r.stderr)")
        let round = try Self.newestRound(db)
        let score = try #require(round.score)
        #expect(r.stdout.contains("Score: \(score) points, \(zip(round.answers, [1, 2, 3, 4, 1]).filter { $0 == $1 }.count) of 5 right."), "\(r.stdout)")
        r = try await CLI.run(["quiz", "demo", "--db", db], stdin: "1\nx\n")
        #expect(r.status == 2, "\(r.stdout)")
        #expect(r.stdout.contains(#"answers[1]: expected a choice 1, 2, 3 or 4, got "x""#), "\(r.stdout)")
        #expect(r.stderr.contains("error: answers[1]: expected a choice 1, 2, 3 or 4, got the end of the input"), "\(r.stderr)")
        #expect(try Self.newestRound(db).score == nil, "the round stays unanswered")
    }

    @Test("Bad input: answers malformed, an unknown user, too little history, no database: exit 2 naming the field")
    func badInput() async throws {
        let (dir, db) = try await Self.database()
        for (answers, message) in [
            ("1,2,3,4,1", "answers: expected QUIZ:C1,C2,C3,C4,C5"), ("qz-1:1,2,3,4", "answers: expected 5 choices, one a question, got 4"),
            ("qz-1:1,2,0,4,1", #"answers[2]: expected a choice 1, 2, 3 or 4, got "0""#), ("qz-1:1,2,3,4,", "answers[4]: expected a choice 1, 2, 3 or 4, got nothing"),
            ("qz-1:1,two,3,4,1", #"answers[1]: expected a choice 1, 2, 3 or 4, got "two""#), ("qz-1:1,2,3,4,1", "quiz: expected a quiz round issued to user 'demo'")
        ] {
            let r = try await CLI.run(["quiz", "demo", "--answers", answers, "--db", db])
            #expect(r.status == 2 && r.stderr.contains("error: \(message)"), "\(answers): \(r.stderr)")
        }
        var r = try await CLI.run(["quiz", "nobody", "--json", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("error: user: expected a known user"), "\(r.stderr)")
        r = try await CLI.run(["quiz", "u-2", "--json", "--db", db])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("error: user: expected a person with a history for a quiz: at least 5 songs liked, in at least 2 bins"), "\(r.stderr)")
        #expect(r.stderr.contains("got 'u-2' with 0 liked songs in 0 bins") && r.stdout.isEmpty, "\(r.stderr)")
        r = try await CLI.run(["quiz", "u-2", "--db", db], stdin: "1\n")
        #expect(r.status == 2 && r.stdout.isEmpty && r.stderr.contains("0 liked songs"), "no empty quiz: \(r.stdout)")
        r = try await CLI.run(["quiz", "demo", "--json", "--db", dir.appendingPathComponent("none.sqlite").path])
        #expect(r.status == 2 && r.stderr.contains("error: db: expected an existing database"), "\(r.stderr)")
    }

    struct NoQuestions: Error {}
}
