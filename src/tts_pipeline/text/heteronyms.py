"""Heteronyms NVIDIA's FastPitch recipe leaves as letters when it converts words to ARPAbet.

From the list NVIDIA ships as ``cmudict/heteronyms``: words whose pronunciation depends on meaning
("read", "live", "lead", "house", "used", "number"), so a dictionary lookup could pick the wrong
one; the model reads them from their letters instead. NVIDIA compares the lower-cased word with
the list's lines, so its 22 capitalised or multi-word lines ("Polish", "color coordinate",
"four-legged") never match anything; only the 391 lines that can match are kept here.
"""

HETERONYMS = frozenset(
    """
    abject abrogate absent abstract abuse ache acuminate addict address adduct advocate affect
    affiliate agape aged agglomerate aggregate agonic agora allied ally alternate alum am analyses
    animate apply appropriate approximate ares arithmetic arsenic articulate associate attribute
    august axes ay aye bases bass bathed bested bifurcate blessed blotto bow bowed bowman brassy
    buffet bustier carbonate choral close closer coax coincidence comber combine combs committee
    commune compact complex compound compress concert conduct confine confines conflict
    conglomerate conscript conserve consist console consort construct consult consummate content
    contest contract contracts contrast converse convert convict coop coordinate covey crooked
    curate cussed decollate decrease defect defense delegate deliberate denier desert detail
    deviate diagnoses diffuse digest discard discharge discount do document does dogged domesticate
    dove dr drawer duplicate egress ejaculate eject elaborate ellipses email emu entrace entrance
    escort estimate eta evening excise excuse exploit export extract fine flower forbear frequent
    furrier gallant gel geminate gillie glower graduate haggis heavy hinder house housewife impact
    imped implant implement import impress incense incline increase infix insert instar insult
    integral intercept interchange interflow interleaf intermediate intern interspace intimate
    intrigue invalid invert invite irony jagged kite laminate lather lead learned leasing lech
    legitimate lied lima lipread live lower lunged maas manes mare marked merchandise merlion
    minute misconduct misled misprint mobile moderate mong moped moth mouth mow mpg multiply mush
    nana nice number numerate nun object opiate ornament outbox outcry outpour outreach outride
    outright outside outwork overall overbid overcall overcast overfall overflow overhaul overhead
    overlap overlay overuse overweight overwork pace palled palling para pasty pate pedal peer
    perfect periodic permit pervert pinta placer platy polish poll pontificate postulate pram
    prayer precipitate predate predicate prefix preposition present pretest primer proceeds produce
    progress project proportionate prospect protest pussy putter putting quite ragged raven re read
    reading real rebel recall recap recitative recollect record recreate recreation redress refill
    refund refuse reject relay remake repaint reprint reread rerun resent reside resign respray
    resume retard retest retread rewrite root routed routing row rugged rummy sais sake sambuca
    saucier second secrete secreted secreting segment separate sewer shirk shower sin skied slaver
    slough sow spoof squid stingy subject subordinate subvert supply supposed survey suspect
    syringes tabulate tales tarrier tarry taxes taxis tear thou tier tinged torment transfer
    transform transplant transport transpose tush unionised unionized update uplift upset use used
    vale violist viva ware whinged whoop wicked wind windy wino won worsted wound
    """.split()
)
