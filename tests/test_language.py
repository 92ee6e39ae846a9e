import pytest

from clinideid.text.language import guess_language

SAMPLES = {
    "en": "The patient was admitted with chest pain and his history of diabetes.",
    "es": "El paciente de 70 años presenta dolor torácico y antecedentes de diabetes.",
    "it": "Il paziente di 70 anni è stato ricoverato per dolore toracico con una storia di diabete.",
    "fr": "Le patient de 70 ans est hospitalisé pour une douleur thoracique avec des antécédents.",
    "de": "Der Patient wurde mit Brustschmerzen aufgenommen und ist nicht stabil, die Werte sind auf.",
    "ru": "Пациент 70 лет поступил с болью в груди, в анамнезе диабет.",
}


@pytest.mark.parametrize("lang, text", SAMPLES.items())
def test_guess_language(lang, text):
    assert guess_language(text) == lang


def test_guess_language_default_on_little_evidence():
    assert guess_language("12/03/2019 45 mg") == "en"
    assert guess_language("", default="es") == "es"
