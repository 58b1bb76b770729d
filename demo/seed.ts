// Seeds the demo datastore on first start: cities, companies (with logos) and employees (some
// with photos and résumés), and the users who may log in. Deterministic: a fixed pseudo-random
// sequence, fixed dates.

import { hash } from '@node-rs/argon2';
import sharp from 'sharp';
import type { DatastoreWithClasses, Entity } from 'dataset-rest';

const CITIES: [string, string, number][] = [
  ['Paris', 'France', 2102650], ['Lyon', 'France', 522250], ['Berlin', 'Germany', 3755251], ['Munich', 'Germany', 1512491],
  ['Madrid', 'Spain', 3332035], ['Barcelona', 'Spain', 1636193], ['Rome', 'Italy', 2748109], ['Milan', 'Italy', 1371498],
  ['London', 'United Kingdom', 8866180], ['Manchester', 'United Kingdom', 568996], ['New York', 'United States', 8258035],
  ['San Francisco', 'United States', 808437], ['Montréal', 'Canada', 1762949], ['Toronto', 'Canada', 2794356],
  ['Tokyo', 'Japan', 13960236], ['Osaka', 'Japan', 2752412], ['São Paulo', 'Brazil', 11451999], ['Zürich', 'Switzerland', 421878],
  ['Amsterdam', 'Netherlands', 931298], ['Brussels', 'Belgium', 1249597],
];
const WORDS = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne', 'Soylent', 'Gringotts', 'Oscorp', 'Massive', 'Aperture', 'Black Mesa', 'Monarch', 'Nakatomi', 'Pied Piper'];
const SUFFIXES = ['Industries', 'Labs'];
const FIRST = ['Anne', 'Bruno', 'Chloé', 'David', 'Émile', 'Fatima', 'Gustav', 'Hélène', 'Ivan', 'Jade', 'Karim', 'Léa', 'Marc', 'Noor', 'Oscar', 'Paula', 'Quentin', 'Rosa', 'Sven', 'Tara', 'Ugo', 'Vera', 'Walid', 'Xavier', 'Yuki', 'Zoé'];
const LAST = ['Martin', 'Bernard', 'Dubois', 'Thomas', 'Robert', 'Richard', 'Petit', 'Durand', 'Leroy', 'Moreau', 'Simon', 'Laurent', 'Lefèvre', 'Michel', 'García', 'Müller', 'Schmidt', 'Rossi', 'Smith', 'Jones', 'Tanaka', 'Silva', 'Novak', 'Olsen', "O'Brien"];
/** Demo users: name, full name, password, roles (roles.json). */
const USERS: [string, string, string, string][] = [
  ['alice', 'Alice Editor', 'alice123', 'Editor'],
  ['bob', 'Bob Payroll', 'bob123', 'Payroll'],
  ['admin', 'Ada Admin', 'admin123', 'Administrator'],
];
const SKILLS = ['sql', 'typescript', 'design', 'sales', 'support', 'finance', 'ops', 'writing'];

/** mulberry32: a small deterministic generator, so every fresh demo has the same data. */
function generator(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function square(r: number, g: number, b: number, size: number): Promise<Buffer> {
  return sharp({ create: { width: size, height: size, channels: 3, background: { r, g, b } } }).png().toBuffer();
}

export default async function seed(ds: DatastoreWithClasses): Promise<void> {
  const rnd = generator(20261122);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)];
  const day = (from: number, to: number) => new Date(Date.UTC(from + Math.floor(rnd() * (to - from)), Math.floor(rnd() * 12), 1 + Math.floor(rnd() * 28)));

  const cities: Entity[] = [];
  for (const [name, country, population] of CITIES) {
    const c = ds.City.new();
    c.set('name', name);
    c.set('country', country);
    c.set('population', population);
    await c.save();
    cities.push(c);
  }

  const companies: Entity[] = [];
  for (let i = 0; i < 40; i++) {
    const c = ds.Company.new();
    c.set('name', `${WORDS[i % WORDS.length]} ${SUFFIXES[Math.floor(i / WORDS.length)]}`);
    c.set('companyCode', `C${String(1000 + i * 7)}`);
    c.set('revenues', Math.round(rnd() * 500) * 100_000);
    c.set('active', i % 5 !== 0);
    c.set('founded', day(1950, 2020));
    c.set('extra', { sector: pick(['retail', 'tech', 'energy', 'health']), tags: [pick(SKILLS), pick(SKILLS)], rating: Math.round(rnd() * 50) / 10 });
    c.set('city', cities[i % cities.length]);
    if (i < 12) c.set('logo', await ds.storeFile(await square(40 + i * 15, 90, 200 - i * 10, 48), 'image/png'));
    await c.save();
    companies.push(c);
  }

  const managers = new Map<unknown, Entity>();
  for (let i = 0; i < 320; i++) {
    const e = ds.Employee.new();
    // Keys are set here (instead of generated) so that every fresh demo has the same ones.
    e.set('ID', Array.from({ length: 32 }, () => '0123456789ABCDEF'[Math.floor(rnd() * 16)]).join(''));
    const employer = companies[Math.floor(rnd() * companies.length)];
    e.set('employeeNumber', 10_000 + i);
    e.set('firstName', pick(FIRST));
    e.set('lastName', pick(LAST));
    e.set('salary', 30_000 + Math.round(rnd() * 900) * 100);
    e.set('level', 1 + Math.floor(rnd() * 9));
    e.set('extension', 1000 + Math.floor(rnd() * 9000));
    e.set('badge', 9_000_000_000 + i);
    e.set('birthDate', day(1960, 2002));
    e.set('hiredAt', new Date(Date.UTC(2015, 0, 1) + Math.floor(rnd() * 3_000) * 86_400_000 + Math.floor(rnd() * 86_400) * 1000));
    e.set('dailyHours', (6 + Math.floor(rnd() * 4)) * 3_600_000);
    e.set('notes', i % 7 === 0 ? 'Speaks three languages.\nMentors new hires.' : null);
    e.set('skills', { main: pick(SKILLS), others: [pick(SKILLS)], remote: rnd() < 0.4 });
    e.set('secret', `s-${Math.floor(rnd() * 1e9)}`);
    e.set('employer', i % 29 === 28 ? null : employer);
    const boss = managers.get(employer.getKey());
    e.set('isManager', !boss);
    if (boss) e.set('manager', boss);
    if (i < 10) e.set('photo', await ds.storeFile(await square(200, 60 + i * 18, 90, 64), 'image/png'));
    if (i < 3) e.set('resume', await ds.storeFile(Buffer.from(`Résumé of employee ${i}\n`), 'text/plain'));
    await e.save();
    if (!boss) managers.set(employer.getKey(), e);
  }

  for (let i = 0; i < 5; i++) {
    const log = ds.AuditLog.new();
    log.set('message', `seeded step ${i + 1}`);
    log.set('at', new Date(Date.UTC(2026, 0, 1, 12, i)));
    await log.save();
  }

  // the demo's users (README, "Sessions and permissions"): passwords kept as Argon2id hashes
  for (const [userName, fullName, password, roles] of USERS) {
    const user = ds.User.new();
    user.set('userName', userName);
    user.set('fullName', fullName);
    user.set('passwordHash', await hash(password));
    user.set('roles', roles);
    await user.save();
  }
}
