"""Invented short clinical notes in each supported language, for the language identification tests."""

# invented short notes, written the way they are typed on a ward: lowercase, abbreviated, no full stop
SHORT_NOTES = {
    "it": [
        "pz ricoverato ieri, moglie presente, dimesso in buone condizioni",
        "paziente vigile, collaborante, apiretico",
        "dolore addominale da tre giorni, alvo chiuso",
    ],
    "es": [
        "pte ingresa por disnea, se pauta oxigeno y queda estable",
        "paciente consciente y orientado, sin fiebre",
        "dolor abdominal de tres dias, refiere nauseas",
    ],
    "en": [
        "pt admitted overnight, wife at bedside, discharged home well",
        "patient alert and oriented, no fever",
        "seen by the on call doctor last night",
    ],
    "fr": [
        "pt hospitalisé hier, épouse présente, sortie en bon état",
        "patient conscient, orienté, apyrétique",
        "douleur abdominale depuis trois jours, nausées",
    ],
    "de": [
        "pat. gestern aufgenommen, ehefrau anwesend, entlassung in gutem zustand",
        "patient wach, orientiert, fieberfrei",
        "bauchschmerzen seit drei tagen, übelkeit",
    ],
    "ru": [
        "пациент поступил вчера, жена рядом, выписан в удовлетворительном состоянии",
        "в сознании, ориентирован, температура в норме",
        "боль в животе три дня, тошнота",
    ],
}
