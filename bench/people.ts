// The query bench's data set: one dataclass (Person) whose text is realistic and varied —
// surnames, first names and cities from many languages, with accents, apostrophes, spaces,
// compound names, and a few values stored in capitals or without their accents, as typed data
// has them. Row n's values come from a hash of n only (deterministic, no clustering by key),
// surnames are skewed (a few common, many rare), and the generator counts every value by its
// folded form, so that the bench knows how many rows each query must find.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openProject } from '../src/project/open.js';
import { fold } from '../src/util/fold.js';
import { connect, relationBytes } from './postgres.js';

export const TABLE = 'Person';

export const MODEL = {
  name: 'QueryBench',
  dataClasses: [
    {
      name: TABLE,
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'lastName', type: 'string', indexed: true },
        { name: 'firstName', type: 'string' },
        { name: 'city', type: 'string' },
        { name: 'salary', type: 'number' },
      ],
    },
  ],
};

const unique = (list: string): string[] => [...new Set(list.split(',').map((s) => s.trim()).filter((s) => s !== ''))];

/** About 330 surnames; "Muller" and "Müller" both on purpose (they fold alike). */
export const LAST_NAMES = unique(`
  Müller, Schmidt, Schneider, Fischer, Weber, Meyer, Wagner, Becker, Schulz, Hoffmann, Schäfer, Koch, Bauer, Richter,
  Klein, Wolf, Schröder, Neumann, Schwarz, Zimmermann, Braun, Krüger, Hofmann, Hartmann, Lange, Schmitt, Werner,
  Schmitz, Krause, Meier, Lehmann, Köhler, Jäger, Günther, Martin, Bernard, Dubois, Thomas, Robert, Richard, Petit,
  Durand, Leroy, Moreau, Simon, Laurent, Lefèvre, Michel, Garcia, David, Bertrand, Roux, Vincent, Fournier, Morel,
  Girard, André, Lefebvre, Mercier, Dupont, Lambert, Bonnet, François, Martinez, Legrand, Garnier, Faure, Rousseau,
  Blanc, Guérin, Muller, Henry, Roussel, Nicolas, Perrin, Morin, Mathieu, Clément, Gauthier, Dumont, Lopez, Fontaine,
  Chevalier, Robin, Masson, Sánchez, Gérard, Nguyễn, Boyer, Denis, Lemaire, Duval, Joly, Gautier, Roger, Roche, Roy,
  Noël, Lucas, Meunier, Pérez, Marchand, Dufour, Blanchard, Barbier, Brun, Dumas, Brunet, Leroux, Colin, Fernández,
  Renard, Arnaud, Rolland, Caron, Aubert, Giraud, Leclerc, Vidal, Bourgeois, Renaud, Lemoine, Picard, Gaillard,
  Philippe, Leclercq, Lacroix, Fabre, Dupuis, Olivier, Rodríguez, da Silva, Hubert, Guillot, Rivière, Le Gall,
  Guillaume, Adam, Rey, Moulin, Gonçalves, Núñez, González, Hernández, Jiménez, Muñoz, Álvarez, Romero, Navarro,
  Gutiérrez, Domínguez, Vázquez, Ramírez, Gil, Serrano, Blanco, Suárez, Molina, Morales, Ortega, Delgado, Castro,
  Ortiz, Rubio, Marín, Iglesias, Rossi, Russo, Ferrari, Esposito, Bianchi, Romano, Colombo, Ricci, Marino, Greco,
  Bruno, Gallo, Conti, De Luca, Mancini, Costa, Giordano, Rizzo, Lombardi, Moretti, O'Brien, O'Connor, McCarthy,
  Smith, Jones, Williams, Brown, Taylor, Davies, Evans, Wilson, Johnson, Roberts, Walker, Wright, Thompson, White,
  Hughes, Edwards, Green, Hall, Wood, Harris, Lewis, Nowak, Kowalski, Wiśniewski, Wójcik, Kowalczyk, Kamiński,
  Lewandowski, Zieliński, Szymański, Woźniak, Dąbrowski, Kozłowski, Jankowski, Mazur, Novák, Svoboda, Dvořák, Černý,
  Procházka, Kučera, Veselý, Horák, Němec, Pokorný, Yılmaz, Kaya, Demir, Şahin, Çelik, Öztürk, Aydın, Özdemir,
  Arslan, Doğan, Jansen, de Jong, de Vries, van den Berg, van Dijk, Bakker, Janssen, Visser, Smit, Meijer, Nielsen,
  Jensen, Hansen, Pedersen, Andersen, Christensen, Larsen, Sørensen, Rasmussen, Jørgensen, Johansson, Andersson,
  Karlsson, Nilsson, Eriksson, Larsson, Olsson, Persson, Svensson, Gustafsson, Korhonen, Virtanen, Mäkinen, Nieminen,
  Mäkelä, Hämäläinen, Laine, Heikkinen, Koskinen, Järvinen, Silva, Santos, Ferreira, Pereira, Oliveira, Rodrigues,
  Martins, Sousa, Fernandes, Gomes, Lopes, Marques, Alves, Almeida, Ribeiro, Pinto, Carvalho, Teixeira,
  Papadopoulos, Horváth, Kovács, Tóth, Szabó, Nagy, Varga, Kiss, Molnár, Németh, Farkas, Balogh, Ó Súilleabháin,
  Beaulieu, Côté, Bélanger, Gagné, Bouchard, Gagnon, Lévesque, Pelletier, Bergeron, Thériault, Ouellet, Lemieux,
`);

export const FIRST_NAMES = unique(`
  Chloé, Zoë, José, Søren, Ana-María, Émile, Hélène, François, Jérôme, Léa, Inès, Noémie, Agnès, Andrés, Björn,
  Jürgen, Åsa, Łukasz, Małgorzata, Zoltán, Dóra, Renée, Anaïs, Maëlle, Joël, Raphaël, Gaël, Michaël, Noël, Benoît,
  Loïc, Thaïs, João, Sebastián, Iñaki, Íñigo, Ramón, Jesús, Sofía, Lucía, María, Martín, Nicolás, Tomás, Matías,
  Zoé, Cécile, Céline, Amélie, Élodie, Émilie, Mélanie, Valérie, Frédéric, Stéphane, Sébastien, Grégoire, Jérémie,
  Anne, Marie, Pierre, Jean, Paul, Jacques, Louis, Lucas, Hugo, Nathan, Théo, Adam, Emma, Jade, Louise, Alice, Lina,
  Rose, Anna, Mila, Julia, Sophie, Laura, Sarah, Camille, Manon, Clara, Eva, Oliver, Harry, Jack, George, Noah,
  Charlie, Jacob, Olivia, Amelia, Isla, Ava, Mia, Ella, Lars, Sven, Ingrid, Astrid, Sigrid, Mikael, Matteo, Giulia,
  Francesca, Lorenzo, Niccolò, Luca, Chiara, Ömer, Elif, Zeynep, Ayşe, Mehmet, Fatma, Jan-Erik, Mary Jane, D'Arcy,
`);

/** About 130 cities (not indexed in the model). */
export const CITIES = unique(`
  Paris, Lyon, Marseille, Besançon, Orléans, Nîmes, Périgueux, Saint-Étienne, Béziers, Créteil, Évry, Montréal,
  Québec, Zürich, Genève, Neuchâtel, Köln, München, Düsseldorf, Nürnberg, Lübeck, Göttingen, Würzburg, Saarbrücken,
  Malmö, Göteborg, Västerås, Umeå, Jönköping, Århus, København, Tromsø, Bodø, Kraków, Łódź, Gdańsk, Poznań, Wrocław,
  Toruń, Brno, Plzeň, České Budějovice, Ústí nad Labem, Bratislava, Košice, Győr, Pécs, Debrecen, Székesfehérvár,
  Eskişehir, Muğla, São Paulo, Belém, Goiânia, Florianópolis, Brasília, Bogotá, Medellín, Asunción, Mérida,
  Querétaro, Cancún, Córdoba, Málaga, Cádiz, León, A Coruña, Logroño, Alcalá de Henares, Lisboa, Setúbal, Évora,
  Braga, Porto, Coimbra, Roma, Milano, Napoli, Torino, Forlì, Cantù, Hà Nội, Reykjavík, Akureyri, Tórshavn, Tallinn,
  Pärnu, Tartu, Rīga, Jūrmala, Vilnius, Šiauliai, Kaunas, Ljubljana, Maribor, Zagreb, Split, Niš, Bucureşti,
  Timişoara, Iaşi, Plovdiv, London, Dublin, Cork, Galway, New York, Chicago, Boston, San José, Los Ángeles,
  Saint-Denis, L'Haÿ-les-Roses, Aix-en-Provence, Clermont-Ferrand, Bâle, Sion, Thônex, Vevey, Lérida, Alès,
`);

export interface PersonValues {
  lastName: string;
  firstName: string;
  city: string;
  salary: number;
}

/** A 32-bit integer hash (lowbias32): row n's "random" numbers, the same on every run. */
function hash(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}
const unit = (n: number, salt: number): number => hash((n * 0x9e3779b1 + salt) >>> 0) / 2 ** 32;

/** How a value was typed in: mostly as written, sometimes in capitals or without its accents. */
function typed(value: string, u: number): string {
  if (u < 0.05) return value.toUpperCase();
  if (u < 0.08) return value.normalize('NFKD').replace(/\p{M}/gu, '');
  return value;
}

/** The values of the n-th row (0-based); its key is n + 1 (autoincrement on an empty table). */
export function personValues(n: number): PersonValues {
  // Surnames are skewed: index ⌊N·u²⌋ makes the first names of the list the most common ones.
  const a = LAST_NAMES[Math.floor(LAST_NAMES.length * unit(n, 1) ** 2)];
  // One in eight is a compound (double-barrelled) surname of two of the 40 first ones.
  const compound = unit(n, 2) < 0.125;
  const lastName = compound ? `${a}-${LAST_NAMES[Math.floor(40 * unit(n, 3))]}` : a;
  return {
    lastName: typed(lastName, unit(n, 4)),
    firstName: typed(FIRST_NAMES[Math.floor(FIRST_NAMES.length * unit(n, 5))], unit(n, 6)),
    city: typed(CITIES[Math.floor(CITIES.length * unit(n, 7))], unit(n, 8)),
    salary: Math.round(20_000 + 100_000 * unit(n, 9) ** 2) + Math.floor(100 * unit(n, 10)) / 100,
  };
}

/** Rows per folded value, as the generator wrote them: what every query must count. */
export class FoldedCounts {
  readonly #counts = new Map<string, number>();
  add(folded: string): void {
    this.#counts.set(folded, (this.#counts.get(folded) ?? 0) + 1);
  }
  /** rows whose folded value is fold(value) */
  equal(value: string): number {
    return this.#counts.get(fold(value)) ?? 0;
  }
  /** rows whose folded value starts with fold(prefix) */
  prefix(prefix: string): number {
    const p = fold(prefix);
    let n = 0;
    for (const [k, c] of this.#counts) if (k.startsWith(p)) n += c;
    return n;
  }
  get distinct(): number {
    return this.#counts.size;
  }
}

export interface PeopleProject {
  readonly dir: string;
  /** the SQLite file, or the PostgreSQL database's URL */
  readonly db: string;
  readonly rows: number;
  /** ms to create the schema through openProject */
  readonly schemaMs: number;
  /** ms of the SQL fill (values, folds, inserts, commit, WAL checkpoint; on PostgreSQL VACUUM ANALYZE apart) */
  readonly fillMs: number;
  /** PostgreSQL: ms of VACUUM ANALYZE after the fill */
  readonly vacuumMs?: number;
  readonly bytes: number;
  readonly lastNames: FoldedCounts;
  readonly cities: FoldedCounts;
}

/**
 * Writes model.json into `dir` (an empty folder), creates the schema through openProject, then
 * fills the table straight with better-sqlite3 in one transaction: the attributes, their folded
 * twins (fold() of src/util/fold.ts, as the server computes them) and the hidden stamp columns.
 */
export async function createPeopleProject(dir: string, rows: number, pgUrl?: string): Promise<PeopleProject> {
  writeFileSync(join(dir, 'model.json'), JSON.stringify(MODEL, null, 2));
  const file = join(dir, 'data', 'data.sqlite');
  const t0 = performance.now();
  const ds = await openProject(dir, pgUrl === undefined ? {} : { db: pgUrl });
  await ds.close();
  const t1 = performance.now();
  if (pgUrl !== undefined) return fillPostgres(dir, pgUrl, rows, t1 - t0);

  const lastNames = new FoldedCounts();
  const cities = new FoldedCounts();
  const folded = memoFold();
  const db = new Database(file);
  let bytes = 0;
  try {
    const columns = ['lastName', 'firstName', 'city', 'salary', 'lastName__fold', 'firstName__fold', 'city__fold', '__stamp', '__timestamp'];
    const insert = db.prepare(`INSERT INTO "${TABLE}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    const now = Date.now();
    db.transaction(() => {
      for (let n = 0; n < rows; n++) {
        const v = personValues(n);
        const [fl, ff, fc] = [folded(v.lastName), folded(v.firstName), folded(v.city)];
        lastNames.add(fl);
        cities.add(fc);
        insert.run(v.lastName, v.firstName, v.city, v.salary, fl, ff, fc, 1, now);
      }
    })();
    // The database is in WAL mode (the server's choice): fold the WAL into the file now, so that
    // the server starts on a compact database and the fill time includes it.
    db.pragma('wal_checkpoint(TRUNCATE)');
    bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
  } finally {
    db.close();
  }
  return { dir, db: file, rows, schemaMs: t1 - t0, fillMs: performance.now() - t1, bytes, lastNames, cities };
}

const BATCH = 10_000;

/** fold() that folds each distinct string once: the data set has a few thousand of them */
function memoFold(): (s: string) => string {
  const folds = new Map<string, string>();
  return (s) => {
    let f = folds.get(s);
    if (f === undefined) folds.set(s, (f = fold(s)));
    return f;
  };
}

/**
 * The same rows on PostgreSQL (the schema made by openProject on the database): INSERT … SELECT
 * FROM unnest of one array a column, BATCH rows a statement, in one transaction; then VACUUM
 * ANALYZE (the planner's statistics and the visibility map, as autovacuum would leave them).
 */
async function fillPostgres(dir: string, url: string, rows: number, schemaMs: number): Promise<PeopleProject> {
  const lastNames = new FoldedCounts();
  const cities = new FoldedCounts();
  const folded = memoFold();
  const c = await connect(url);
  try {
    const t1 = performance.now();
    const columns = ['lastName', 'firstName', 'city', 'salary', 'lastName__fold', 'firstName__fold', 'city__fold'];
    const types = ['text', 'text', 'text', 'float8', 'text', 'text', 'text'];
    const sql =
      `INSERT INTO "${TABLE}" (${columns.map((x) => `"${x}"`).join(', ')}, "__stamp", "__timestamp") ` +
      `SELECT *, 1, ${Date.now()} FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;
    await c.query('BEGIN');
    for (let from = 0; from < rows; from += BATCH) {
      const cols: unknown[][] = columns.map(() => []);
      for (let n = from; n < Math.min(rows, from + BATCH); n++) {
        const v = personValues(n);
        const [fl, ff, fc] = [folded(v.lastName), folded(v.firstName), folded(v.city)];
        lastNames.add(fl);
        cities.add(fc);
        const row = [v.lastName, v.firstName, v.city, v.salary, fl, ff, fc];
        for (let i = 0; i < row.length; i++) cols[i].push(row[i]);
      }
      await c.query(sql, cols);
    }
    await c.query('COMMIT');
    const t2 = performance.now();
    await c.query(`VACUUM ANALYZE "${TABLE}"`);
    const t3 = performance.now();
    return { dir, db: url, rows, schemaMs, fillMs: t2 - t1, vacuumMs: t3 - t2, bytes: await relationBytes(c, TABLE), lastNames, cities };
  } finally {
    await c.end();
  }
}
