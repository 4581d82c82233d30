import Foundation
import Testing

@testable import SoundtrackContext

@Suite("Calendar and place classification")
struct ClassifierTests {
    @Test(
        arguments: [
            // workout
            ("Leg day", EventCategory.workout), ("Spinning class", .workout), ("Yoga", .workout), ("Krafttraining", .workout),
            ("Morning run", .workout), ("Gym – push", .workout), ("Pilates mit Anna", .workout), ("5k with the club", .workout),
            ("Fußballtraining", .workout), ("Schwimmen", .workout), ("Entraînement fractionné", .workout),
            ("Séance de musculation", .workout), ("Natation", .workout), ("Entrenamiento funcional", .workout),
            ("Clase de spinning", .workout), ("Ir al gimnasio", .workout), ("Allenamento gambe", .workout),
            ("Palestra", .workout), ("Corsa al parco", .workout), ("Treino de pernas", .workout), ("Academia", .workout),
            ("Bouldern mit Tom", .workout), ("HIIT", .workout), ("Tennis with Marco", .workout), ("Recovery run", .workout),
            // study
            ("Lerngruppe", .study), ("Révisions", .study), ("Examen de física", .study), ("Study group – algorithms", .study),
            ("Math homework", .study), ("Lecture: Linear Algebra", .study), ("CS101 lecture", .study),
            ("Vorlesung Analysis", .study), ("Klausurvorbereitung", .study), ("Mathe lernen", .study),
            ("Cours de chimie", .study), ("Partiel d'économie", .study), ("Devoirs", .study), ("Clase de historia", .study),
            ("Estudiar para el parcial", .study), ("Lezione di storia", .study), ("Esame di chimica", .study),
            ("Studiare latino", .study), ("Aula de matemática", .study), ("Prova de física", .study),
            ("Office hours with Prof. Kim", .study), ("Thesis writing", .study), ("Hausarbeit schreiben", .study),
            // work
            ("Sprint planning", .work), ("1:1 with Ana", .work), ("Standup", .work), ("Daily stand-up", .work),
            ("Besprechung", .work), ("Réunion d'équipe", .work), ("Reunión con el cliente", .work),
            ("Riunione settimanale", .work), ("Reunião de equipe", .work), ("Quarterly business review", .work),
            ("Code review", .work), ("Client call", .work), ("Interview – backend candidate", .work), ("Teammeeting", .work),
            ("Jour fixe", .work), ("Retro", .work), ("All hands", .work), ("Kundentermin", .work), ("Frühschicht", .work),
            ("Point projet", .work), ("Deploy v2.3", .work), ("Weekly check-in", .work),
            // social
            ("Dinner with Sam", .social), ("Birthday party", .social), ("Drinks with the team", .social),
            ("Abendessen mit Lisa", .social), ("Geburtstag von Oma", .social), ("Dîner chez Paul", .social), ("Apéro", .social),
            ("Anniversaire de Julie", .social), ("Cena con amigos", .social), ("Cumpleaños de Marta", .social),
            ("Pranzo con i colleghi", .social), ("Compleanno di Luca", .social), ("Jantar com a família", .social),
            ("Churrasco", .social), ("Concert: Arctic Monkeys", .social), ("Movie night", .social), ("Game night", .social),
            ("Coffee with Priya", .social), ("Brunch", .social), ("Call Mom", .social),
            // travel
            ("Flight LH 432 to Berlin", .travel), ("Train to Lyon", .travel), ("Flug nach München", .travel),
            ("Zug nach Hamburg", .travel), ("Vol pour Paris", .travel), ("Vuelo a Madrid", .travel), ("Volo per Roma", .travel),
            ("Voo para Lisboa", .travel), ("Trip to Lisbon", .travel), ("Dienstreise Berlin", .travel), ("Urlaub", .travel),
            ("Hotel check-in", .travel), ("Road trip", .travel),
            // rest
            ("Nap", .rest), ("Meditation", .rest), ("Power nap", .rest), ("Mittagsschlaf", .rest), ("Sieste", .rest),
            ("Siesta", .rest), ("Pisolino", .rest), ("Cochilo", .rest), ("Lunch break", .rest), ("Spa day", .rest),
            ("Méditation guidée", .rest), ("Pause", .rest), ("Me time", .rest), ("Meditation class", .rest),
            // other
            ("Dentist", .other), ("Zahnarzt", .other), ("Doctor's appointment", .other), ("Haircut", .other),
            ("Pick up dry cleaning", .other), ("Renew passport", .other), ("Taxes", .other), ("Rendez-vous médecin", .other),
            ("Cita con el médico", .other), ("Parrucchiere", .other), ("Pay rent", .other), ("Vet appointment", .other),
            ("Arzttermin", .other), ("", .other), ("🎉🎉", .other)
        ] as [(String, EventCategory)])
    func classifiesTitles(title: String, category: EventCategory) {
        #expect(CalendarClassifier.classify(title) == category)
    }

    @Test(
        arguments: [
            ("home", PlaceCategory.home), ("Home office", .home), ("Zuhause", .home), ("Chez moi", .home), ("Casa", .home),
            ("library", .library), ("Stadtbibliothek", .library), ("Bibliothèque François-Mitterrand", .library),
            ("University library", .library), ("Biblioteca Nacional", .library),
            ("gym", .gym), ("Fitnessstudio", .gym), ("Yoga studio", .gym), ("Swimming pool", .gym), ("Hallenbad", .gym),
            ("Palestra", .gym), ("Sports center", .gym),
            ("school", .school), ("Campus", .school), ("Universität Wien", .school), ("Université de Lyon", .school),
            ("Class", .school), ("Escola", .school), ("Gymnasium am Markt", .school),
            ("work", .work), ("Office", .work), ("Büro", .work), ("Oficina", .work), ("Ufficio", .work), ("WeWork coworking", .work),
            ("cafe", .cafe), ("Coffee shop", .cafe), ("Café Central", .cafe), ("Restaurant", .cafe), ("Irish pub", .cafe),
            ("Starbucks", .cafe), ("Boulangerie", .cafe),
            ("Supermarket", .shop), ("Mall", .shop), ("Supermarché", .shop), ("Centro comercial", .shop), ("Wochenmarkt", .shop),
            ("Car", .transit), ("Hauptbahnhof", .transit), ("Gare de Lyon", .transit), ("Airport", .transit),
            ("Bus stop", .transit), ("Commute", .transit), ("Car park", .transit),
            ("Central Park", .outdoors), ("Beach", .outdoors), ("Trail", .outdoors), ("Forest", .outdoors), ("Strand", .outdoors),
            ("Parque del Retiro", .outdoors),
            ("Grandma's", .other), ("Church", .other), ("", .other)
        ] as [(String, PlaceCategory)])
    func classifiesPlaces(label: String, category: PlaceCategory) {
        #expect(PlaceClassifier.classify(label) == category)
    }

    @Test(
        arguments: [
            ("Study group – Algorithmen & Café", ["study", "group", "algorithmen", "cafe"]),
            ("Révisions: ÉCOLE", ["revisions", "ecole"]),
            ("Größe Straße", ["grosse", "strasse"]),
            ("Łódź, Ærø, Œuvre", ["lodz", "aero", "oeuvre"]),
            ("1:1 with Ana", ["1", "1", "with", "ana"]),
            ("Cafe\u{301} combining", ["cafe", "combining"]),
            ("  --  ", []),
            ("東京 meeting", ["東京", "meeting"]),
            ("ПРИВЕТ", ["привет"])
        ] as [(String, [String])])
    func normalisesText(text: String, tokens: [String]) {
        #expect(TextNormalizer.tokens(text) == tokens)
    }
}

@Suite("Place book")
struct PlaceBookTests {
    @Test func clustersNearbyPoints() {
        var book = PlaceBook()
        #expect(book.resolve(lat: 48.0, lon: 11.0, radiusMeters: 150) == "pl-1")
        #expect(book.resolve(lat: 48.0009, lon: 11.0, radiusMeters: 150) == "pl-1")  // ~100 m north
        #expect(book.places[0].count == 2)
        #expect(book.places[0].lat == 48.0)  // the mean, 48.00045, kept at 0.001°
        #expect(book.places[0].lon == 11.0)
        #expect(book.resolve(lat: 48.01, lon: 11.0, radiusMeters: 150) == "pl-2")  // ~1.1 km
        #expect(book.resolve(lat: 48.0, lon: 11.0, radiusMeters: 150) == "pl-1")
        #expect(book.places[0].count == 3)
        #expect(book.resolve(lat: 48.0026, lon: 11.0, radiusMeters: 150) == "pl-3")  // ~290 m
        #expect(book.places[2].lat == 48.003)
        #expect(book.resolve(lat: 48.0018, lon: 11.0, radiusMeters: 150) == "pl-3")  // ~133 m from its centre
        #expect(book.places[2].lat == 48.002)  // (48.003 + 48.0018) / 2 = 48.0024
    }

    @Test("Centres are kept at 0.001°; points within 30 m of their spot resolve to the places full precision gives")
    func centresAreCoarsenedAndPlacesUnchanged() {
        // The book before centres were coarsened, for comparison.
        func fullPrecision(_ points: [(Double, Double)]) -> [String] {
            var places: [(lat: Double, lon: Double, n: Double)] = []
            return points.map { lat, lon in
                let near = places.indices.filter {
                    PlaceBook.distanceMeters(lat1: lat, lon1: lon, lat2: places[$0].lat, lon2: places[$0].lon) <= 150
                }.min {
                    PlaceBook.distanceMeters(lat1: lat, lon1: lon, lat2: places[$0].lat, lon2: places[$0].lon)
                        < PlaceBook.distanceMeters(lat1: lat, lon1: lon, lat2: places[$1].lat, lon2: places[$1].lon)
                }
                if let i = near {
                    places[i].n += 1
                    places[i].lat += (lat - places[i].lat) / places[i].n
                    places[i].lon += (lon - places[i].lon) / places[i].n
                    return "pl-\(i + 1)"
                }
                places.append((lat, lon, 1))
                return "pl-\(places.count)"
            }
        }
        // A person's spots: home, work, gym, a café 400 m from work; each visit within 30 m.
        let spots = [(52.520008, 13.404954), (52.507530, 13.390930), (52.531677, 13.381777), (52.509300, 13.396100)]
        var rng = SplitMix(seed: 42)
        let points = (0..<400).map { _ -> (Double, Double) in
            let (lat, lon) = spots[Int(rng.next() % 4)]
            let dLat = (Double(rng.next() % 1000) / 1000 - 0.5) * 2 * 30 / 111_195  // ±30 m
            let dLon = (Double(rng.next() % 1000) / 1000 - 0.5) * 2 * 30 / (111_195 * cos(lat * .pi / 180))
            return (lat + dLat, lon + dLon)
        }
        var book = PlaceBook()
        let ids = points.map { book.resolve(lat: $0.0, lon: $0.1, radiusMeters: 150) }
        #expect(ids == fullPrecision(points))
        #expect(book.places.count == 4)
        for p in book.places {
            #expect(p.lat == PlaceBook.coarsened(p.lat) && p.lon == PlaceBook.coarsened(p.lon))
            #expect(abs(p.lat * 1000 - (p.lat * 1000).rounded()) < 1e-6)
        }
    }

    @Test func nearestPlaceWins() {
        var book = PlaceBook(places: [
            LearnedPlace(id: "pl-1", lat: 0, lon: 0, count: 5),
            LearnedPlace(id: "pl-2", lat: 0, lon: 0.002, count: 1)  // ~222 m east
        ])
        #expect(book.nearest(lat: 0, lon: 0.0012, within: 150)?.id == "pl-2")
        #expect(book.resolve(lat: 0, lon: 0.0012, radiusMeters: 150) == "pl-2")
        #expect(book.places[1].count == 2)
        #expect(book.places[0].count == 5)
        #expect(book.nearest(lat: 10, lon: 10, within: 150) == nil)
    }

    @Test func idsContinueAfterTheHighest() {
        var book = PlaceBook(places: [LearnedPlace(id: "pl-4", lat: 0, lon: 0, count: 1)])
        #expect(book.resolve(lat: 1, lon: 1, radiusMeters: 150) == "pl-5")
        // A book emptied (location services off, then on again) does not give a forgotten place's
        // name, which the vocabulary still holds, to a new one.
        var emptied = PlaceBook()
        #expect(emptied.resolve(lat: 1, lon: 1, radiusMeters: 150, reserved: ["label:home", "pl-1", "pl-2"]) == "pl-3")
    }

    @Test func wrapsTheAntimeridian() {
        var book = PlaceBook()
        #expect(book.resolve(lat: 0, lon: 179.9995, radiusMeters: 150) == "pl-1")
        #expect(book.resolve(lat: 0, lon: -179.9995, radiusMeters: 150) == "pl-1")  // ~111 m across
        let lon = book.places[0].lon
        #expect(abs(abs(lon) - 180) < 1e-9)
    }

    @Test func measuresGreatCircles() {
        let d = PlaceBook.distanceMeters(lat1: 48.8566, lon1: 2.3522, lat2: 51.5074, lon2: -0.1278)  // Paris–London
        #expect(abs(d - 343_556.53) < 1)
        #expect(PlaceBook.distanceMeters(lat1: 10, lon1: 20, lat2: 10, lon2: 20) == 0)
    }

    @Test func isDeterministicAndCodable() throws {
        var rng = SplitMix(seed: 3)
        var a = PlaceBook()
        var b = PlaceBook()
        for _ in 0..<500 {
            let lat = 40 + Double(rng.next() % 1000) / 100_000
            let lon = -3 + Double(rng.next() % 1000) / 100_000
            #expect(a.resolve(lat: lat, lon: lon, radiusMeters: 150) == b.resolve(lat: lat, lon: lon, radiusMeters: 150))
        }
        #expect(a == b)
        #expect(a.places.reduce(0) { $0 + $1.count } == 500)
        let data = try JSONEncoder().encode(a)
        #expect(try JSONDecoder().decode(PlaceBook.self, from: data) == a)
    }
}
