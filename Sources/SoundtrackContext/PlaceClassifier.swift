/// The kind of place a `location.place` label names; the `place.*` feature slots.
public enum PlaceCategory: String, Sendable, Equatable, CaseIterable {
    case home, work, school, library, gym, cafe, outdoors, shop, transit, other
}

/// Maps a place label (`"Stadtbibliothek"`, `"Coffee shop"`, `"Gare de Lyon"`) to a ``PlaceCategory``.
///
/// Labels are normalised by ``TextNormalizer`` and matched against words and stems in
/// English, German, French, Spanish, Italian and Portuguese. The first category in this
/// order whose rules match wins: home, library, gym, school, work, cafe, shop, transit,
/// outdoors; a label that matches nothing is ``PlaceCategory/other``. So "University
/// library" is a library, "Coffee shop" a cafe and "Car park" transit.
public enum PlaceClassifier {
    /// The category of a place label.
    ///
    /// - Parameter label: the label the app sent.
    /// - Returns: the category of the first matching rule, or ``PlaceCategory/other``.
    public static func classify(_ label: String) -> PlaceCategory {
        classify(tokens: TextNormalizer.tokens(label))
    }

    static func classify(tokens: [String]) -> PlaceCategory {
        rules.match(tokens) ?? .other
    }

    static let rules = KeywordRules<PlaceCategory>([
        (
            .home,
            [
                "home", "house", "my place", "casa", "hogar", "lar", "maison", "chez moi", "domicile", "domicilio", "zuhause",
                "daheim", "wohnung", "apartment", "apt", "flat", "appartement", "appartamento", "apartamento", "piso", "residence"
            ]
        ),
        (
            .library,
            [
                "library", "libraries", "*bibliothek", "bibliothek*", "bibliotheque", "biblioteca", "bucherei", "*bucherei",
                "mediatheque", "bibli", "bib"
            ]
        ),
        (
            .gym,
            [
                "gym", "fitness*", "*fitness", "sport*", "pool", "studio", "yoga", "crossfit", "gimnasio",
                "palestra", "academia", "ginasio", "turnhalle", "schwimmbad", "*bad", "piscine", "piscina", "salle de sport",
                "stadium", "stadion", "stade", "estadio", "stadio", "dojo", "tennis", "rink", "climbing", "boulder*"
            ]
        ),
        (
            .school,
            [
                "school", "schools", "university", "uni", "campus", "college", "class", "classroom", "lecture", "*schule",
                "schule", "gymnasium", "universitat", "hochschule", "*hochschule", "ecole", "universite", "lycee",
                "fac", "faculte", "escuela", "universidad", "colegio", "facultad", "instituto", "scuola", "universita",
                "liceo", "facolta", "escola", "universidade", "faculdade", "aula", "hoersaal", "horsaal", "mensa"
            ]
        ),
        (
            .work,
            [
                "work", "office", "workplace", "job", "hq", "headquarters", "coworking", "cowork*", "arbeit*", "*arbeit",
                "buro", "firma", "bureau", "travail", "oficina", "trabajo", "ufficio", "lavoro", "escritorio", "trabalho",
                "factory", "fabrik", "werk", "warehouse"
            ]
        ),
        (
            .cafe,
            [
                "cafe", "cafes", "coffee*", "*coffee", "starbucks", "restaurant*", "bar", "bars", "pub", "pubs", "bistro",
                "brasserie", "kaffee*", "*cafe", "cafeteria", "kneipe", "restaurante", "ristorante", "trattoria", "osteria",
                "pizzeria", "taverna", "tasca", "bakery", "backerei", "boulangerie", "panaderia", "padaria", "diner", "canteen",
                "kantine", "teahouse", "tearoom", "biergarten", "cantina", "lanchonete", "tapas"
            ]
        ),
        (
            .shop,
            [
                "shop", "shops", "shopping", "store", "stores", "mall", "supermarket", "market", "grocery", "groceries",
                "geschaft", "laden", "*laden", "supermarkt", "markt", "*markt", "einkaufszentrum", "magasin", "boutique",
                "supermarche", "marche", "centre commercial", "tienda", "mercado", "supermercado", "centro comercial",
                "negozio", "mercato", "supermercato", "loja", "ikea", "outlet"
            ]
        ),
        (
            .transit,
            [
                "station", "stations", "airport", "bus", "train", "car", "commute", "commuting", "subway", "metro", "tram",
                "u bahn", "s bahn", "*bahnhof", "bahnhof*", "flughafen", "zug", "auto", "gare", "aeroport", "voiture",
                "estacion", "aeropuerto", "tren", "coche", "stazione", "aeroporto", "treno", "macchina", "estacao",
                "comboio", "carro", "onibus", "parking", "parkhaus", "highway", "motorway", "autobahn", "road", "ferry",
                "taxi", "terminal", "platform", "haltestelle", "driving"
            ]
        ),
        (
            .outdoors,
            [
                "park", "parks", "beach", "trail", "forest", "woods", "garden", "lake", "mountain*", "hike", "hiking",
                "river", "camping", "campsite", "outdoors", "outside", "strand", "wald", "see", "berg", "berge", "garten",
                "plage", "foret", "parc", "jardin", "montagne", "playa", "bosque", "parque", "montana", "rio", "spiaggia",
                "bosco", "parco", "giardino", "montagna", "lago", "praia", "floresta", "jardim", "montanha", "field", "meadow"
            ]
        )
    ])
}
