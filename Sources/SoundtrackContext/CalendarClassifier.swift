/// Classifies calendar event titles into ``EventCategory`` values by keyword rules.
///
/// Titles are normalised by ``TextNormalizer`` (lower case, diacritics folded, split on
/// punctuation), then matched against word, stem and phrase rules in English, German,
/// French, Spanish, Italian and Portuguese. The first rule in this order of precedence wins:
///
/// 1. **Overrides**: phrases that would otherwise be misread (`office hours` → study,
///    `dry run` → work, `bank holiday` → rest, `class reunion` → social, family members →
///    social, medical and personal errands such as `dentist`, `Arzt` → other).
/// 2. **travel**: flights, trains as transport, trips, airports, hotels, vacations.
/// 3. **workout**: gym, training, sports, runs, yoga, `leg day`… (before study, so that
///    "Spinning class" is a workout, not a lesson).
/// 4. **rest**: naps, sleep, meditation, breaks, spa (before study, so that
///    "Meditation class" is rest).
/// 5. **study**: classes, lectures, exams, revision, homework, school subjects.
/// 6. **work**: meetings, stand-ups, sprints, 1:1s, reviews, clients, shifts.
/// 7. **social**: meals with people, parties, birthdays, concerts, friends and family.
/// 8. Anything else is **other** (a title that matches nothing, or an empty one).
///
/// ```swift
/// CalendarClassifier.classify("Krafttraining")             // .workout
/// CalendarClassifier.classify("Examen de física")          // .study
/// CalendarClassifier.classify("1:1 with Ana")              // .work
/// ```
public enum CalendarClassifier {
    /// The category of an event title.
    ///
    /// - Parameter title: the event's title, in any of the supported languages.
    /// - Returns: the category of the first matching rule, or ``EventCategory/other``.
    public static func classify(_ title: String) -> EventCategory {
        rules.match(TextNormalizer.tokens(title)) ?? .other
    }

    static let rules = KeywordRules<EventCategory>([
        // 1. Overrides.
        (.study, ["office hours", "study group*", "study session*", "lab report*"]),
        (.work, ["dry run", "sales training", "compliance training", "team building", "code review*"]),
        (.rest, ["bank holiday", "public holiday", "day off", "rest day", "power nap", "me time", "lunch break"]),
        (
            .social,
            [
                "class reunion", "family reunion", "comedy*", "wedding*", "mom", "mum", "dad", "mama", "papa", "parents",
                "grandma", "grandpa", "oma", "opa", "mutter", "vater", "eltern", "maman", "mamie", "papi", "abuela", "abuelo",
                "nonna", "nonno", "avo", "avos", "date night", "date with", "board game*", "holiday party"
            ]
        ),
        (
            .other,
            [
                "dentist*", "doctor*", "dr", "arzt*", "*arzt", "medecin", "dentiste", "medico", "dentista", "physio*",
                "haircut", "friseur", "coiffeur", "peluqueria", "parrucchiere", "cabeleireiro", "vet", "errands",
                "checkup", "check up", "therapy", "therapist", "pharmacy", "apotheke", "church", "kirche", "gottesdienst"
            ]
        ),
        // 2. Travel.
        (
            .travel,
            [
                "flight*", "fly", "flying", "flug", "*flug", "vol", "vuelo", "volo", "voo", "train", "trains", "zug", "*zug",
                "zugfahrt", "bahnfahrt", "tgv", "tren", "treno", "comboio", "trip", "*trip", "travel*", "reise", "*reise",
                "reisen", "voyage", "viaje", "viaggio", "viagem", "airport", "flughafen", "aeroport", "aeropuerto", "aeroporto",
                "boarding", "layover", "hotel", "airbnb", "ferry", "fahre", "commute", "pendeln", "drive to", "bus to", "taxi",
                "uber", "departure", "abflug", "abfahrt", "arrival", "ankunft", "vacation*", "vacances", "urlaub", "vacaciones",
                "vacanze", "ferias", "holiday", "holidays", "road trip", "gare", "bahnhof", "estacion",
                "stazione", "estacao"
            ]
        ),
        // 3. Workout.
        (
            .workout,
            [
                "leg day", "arm day", "push day", "pull day", "chest day", "back day", "shoulder day", "work out", "gym",
                "workout*", "training*", "*training", "run", "runs", "running", "jog", "jogging", "joggen", "lauf", "laufen",
                "lauftreff", "yoga", "pilates", "spin", "spinning", "cycling", "bike ride", "radfahren", "swim", "swimming",
                "schwimmen", "crossfit", "hiit", "cardio", "lift", "lifting", "weights", "strength", "tennis", "padel",
                "squash", "badminton", "football", "soccer", "fussball*", "futbol", "futebol", "calcio", "calcetto",
                "basketball", "volleyball", "handball", "climbing", "bouldering", "klettern", "bouldern", "boxing", "boxen",
                "kickboxing", "karate", "judo", "bjj", "taekwondo", "zumba", "dance class", "ballet", "stretching",
                "mobility", "marathon", "5k", "10k", "triathlon", "rowing", "hike", "hiking", "wandern", "ski", "skiing",
                "surf", "surfing", "golf", "fitness*", "sport*", "turnen", "entrainement", "musculation",
                "muscu", "natation", "velo", "footing", "course a pied", "salle de sport", "entrenamiento", "entreno",
                "correr", "gimnasio", "natacion", "ciclismo", "pesas", "allenamento", "corsa", "palestra", "nuoto", "treino",
                "corrida", "academia", "natacao", "musculacao", "ginasio", "caminhada"
            ]
        ),
        // 4. Rest.
        (
            .rest,
            [
                "nap", "naps", "napping", "sleep", "sleeping", "siesta", "meditat*", "mindfulness", "relax*", "rest", "break",
                "pause", "*pause", "*schlaf*", "schlafen", "ruhe*", "entspann*", "sieste", "repos", "detente", "descanso",
                "descansar", "riposo", "pisolino", "pausa", "cochilo", "soneca", "sesta", "spa", "massage", "sauna", "wellness",
                "bedtime", "wind down", "downtime", "recovery"
            ]
        ),
        // 5. Study.
        (
            .study,
            [
                "study", "studies", "studying", "homework", "exam*", "midterm*", "finals", "quiz", "lecture*", "class",
                "classes", "seminar*", "tutorial*", "tutor*", "course", "courses", "coursework", "thesis", "dissertation",
                "assignment*", "essay*", "lab", "revision*", "revise", "revising", "learn*", "lesson*", "school", "uni",
                "university", "college", "*vorlesung", "vorlesung*", "klausur*", "prufung*", "*prufung", "lern*", "*lernen",
                "hausaufgabe*", "hausarbeit", "ubung", "tutorium", "nachhilfe", "schule", "abitur", "cours", "partiel*",
                "devoir*", "td", "tp", "etude*", "etudier", "memoire", "bac", "estudiar", "estudio", "clase*", "tarea*",
                "deberes", "parcial", "leccion", "repaso", "tesis", "universidad", "facultad", "studiare", "lezione",
                "esame", "compito*", "verifica", "interrogazione", "ripasso", "tesi", "universita", "estudar", "estudo*",
                "aula", "prova", "trabalho de casa", "licao", "faculdade", "tcc", "math", "maths", "mathe", "mathematik",
                "mathematiques", "matematica", "matematicas", "physics", "physik", "fisica", "physique", "chemistry",
                "chemie", "quimica", "chimie", "chimica", "biology", "biologie", "biologia", "calculus", "algebra",
                "statistics", "algorithm*", "algorithmen", "grammar", "vocab*", "vokabeln"
            ]
        ),
        // 6. Work.
        (
            .work,
            [
                "meeting*", "*meeting", "standup", "stand up", "daily", "scrum", "sprint*", "planning", "retro*", "review",
                "sync", "1 1", "1on1", "one on one", "call", "interview*", "workshop*", "presentation*", "demo", "deadline*",
                "client*", "customer*", "kickoff", "kick off", "all hands", "town hall", "okr*", "roadmap", "board", "webinar",
                "conference", "konferenz", "offsite", "onboarding", "status", "report*", "budget*", "quarterly", "work",
                "office", "shift", "*schicht", "dienst", "*dienst", "arbeit*", "besprechung*", "*besprechung", "jour fixe",
                "abstimmung", "telko", "reunion", "riunione", "reuniao", "travail", "bureau", "trabajo", "oficina", "lavoro",
                "ufficio", "trabalho", "escritorio", "entrevista", "colloquio", "entretien", "cliente", "kunde*", "projekt*",
                "project*", "proyecto", "progetto", "projet", "deploy*", "release", "launch", "hackathon", "pitch",
                "invoice*", "check in", "checkin"
            ]
        ),
        // 7. Social.
        (
            .social,
            [
                "dinner", "lunch", "brunch", "breakfast", "drinks", "drink", "beer*", "bier", "cerveza", "party", "parties",
                "birthday*", "bday", "bbq", "barbecue", "game night", "games night", "concert*", "konzert*", "movie*", "cinema",
                "kino", "cine", "theater", "theatre", "teatro", "hangout", "hang out", "catch up", "catchup", "friends",
                "friend", "freunde*", "freundin", "amis", "amies", "amigos", "amigas", "amici", "family", "familie", "famille",
                "familia", "famiglia", "visit", "besuch", "abendessen", "mittagessen", "*essen", "fruhstuck", "geburtstag*",
                "*geburtstag", "feier*", "*feier", "kneipe", "grillen", "diner", "dejeuner", "souper", "apero*",
                "anniversaire", "soiree", "fete", "cena", "comida", "almuerzo", "cumpleanos", "fiesta", "quedada", "copas",
                "pranzo", "compleanno", "festa", "aperitivo", "jantar", "almoco", "aniversario", "churrasco", "encontro",
                "pub", "bar", "club", "wine", "karaoke", "picnic", "picknick", "meetup", "coffee", "kaffee", "cafe", "tea",
                "potluck", "gig", "festival", "museum", "exhibition", "baby shower", "housewarming", "sleepover"
            ]
        )
    ])
}
