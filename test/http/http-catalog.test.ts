// HTTP scenarios for the structure catalog: GET /rest/$catalog, /rest/$catalog/$all and
// /rest/$catalog/{dataClass} over the demo project (spec "Catalog", reference §2.1).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ERRORS } from '../../src/errors/registry.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_DIR, openDemo, tempDir, type DemoFixture } from '../support/helpers.js';

type Json = Record<string, any>;

const EXPOSED = ['City', 'Company', 'Employee'];
const STORAGE_TYPES = ['bool', 'blob', 'byte', 'date', 'duration', 'image', 'long', 'long64', 'number', 'string', 'uuid', 'word', 'object'];
const KINDS = ['storage', 'relatedEntity', 'relatedEntities', 'calculated', 'alias'];

/** Which catalog properties an attribute of each kind may carry (spec "Catalog attribute description"). */
const ALLOWED: Record<string, readonly string[]> = {
  storage: ['fieldPos', 'indexed', 'identifying', 'simpleDate', 'defaultFormat', 'multiLine'],
  relatedEntity: ['fieldPos', 'foreignKey', 'inverseName', 'path', 'defaultFormat'],
  relatedEntities: ['fieldPos', 'inverseName', 'reversePath', 'path', 'defaultFormat'],
  alias: ['path', 'readOnly', 'defaultFormat', 'multiLine'],
  calculated: ['readOnly', 'defaultFormat', 'multiLine'],
};
/** …and which of them it must carry. */
const REQUIRED: Record<string, readonly string[]> = {
  storage: ['fieldPos'],
  relatedEntity: ['fieldPos', 'foreignKey', 'path'],
  relatedEntities: ['fieldPos', 'inverseName', 'reversePath', 'path'],
  alias: ['path', 'readOnly'],
  calculated: ['readOnly'],
};
/** Always there, whatever the kind. `extraProperties` may be added by the model to any attribute. */
const COMMON = ['name', 'kind', 'scope', 'type'];
const FREE = ['extraProperties'];
const OPTIONAL_FLAGS = ['indexed', 'identifying', 'reversePath', 'readOnly', 'multiLine', 'simpleDate'];

function byName(list: readonly Json[], name: string): Json {
  const found = list.find((x) => x.name === name);
  assert.ok(found, `'${name}' is listed`);
  return found;
}

describe('HTTP catalog', () => {
  let demo: DemoFixture;
  let all: Json;
  before(async () => {
    demo = await openDemo();
    const res = await demo.request('/rest/$catalog/$all');
    assert.equal(res.status, 200);
    all = res.body;
  });
  after(() => demo.close());

  describe('GET /rest/$catalog', () => {
    it('lists each exposed dataclass as exactly {name, uri, dataURI}', async () => {
      const res = await demo.request('/rest/$catalog');
      assert.equal(res.status, 200);
      assert.ok(Array.isArray(res.body.dataClasses), 'dataClasses is an array');
      assert.deepEqual(
        res.body.dataClasses,
        EXPOSED.map((name) => ({ name, uri: `/rest/$catalog/${name}`, dataURI: `/rest/${name}` })),
      );
    });

    it('leaves out the non-exposed AuditLog dataclass', async () => {
      const res = await demo.request('/rest/$catalog');
      assert.ok(!res.body.dataClasses.some((d: Json) => d.name === 'AuditLog'));
      assert.ok(!JSON.stringify(res.body).includes('AuditLog'));
    });

    it('gives a uri and a dataURI that both answer 200 for every listed dataclass', async () => {
      const res = await demo.request('/rest/$catalog');
      for (const d of res.body.dataClasses) {
        const structure = await demo.request(d.uri);
        assert.equal(structure.status, 200, d.uri);
        assert.equal(structure.body.name, d.name);
        const data = await demo.request(`${d.dataURI}?$top=1`);
        assert.equal(data.status, 200, d.dataURI);
        assert.equal(data.body.__entityModel, d.name);
      }
    });

    it('answers with application/json', async () => {
      const res = await demo.request('/rest/$catalog');
      assert.match(String(res.headers['content-type']), /^application\/json/);
    });
  });

  describe('exposed functions in the catalog', () => {
    const COMPANY_METHODS = [
      { name: 'byCode', applyTo: 'dataClass', exposed: true, allowedOnHTTPGET: true },
      { name: 'totalRevenues', applyTo: 'entityCollection', exposed: true, allowedOnHTTPGET: false },
    ];

    it('lists the exposed functions of a dataclass\'s classes as its methods', async () => {
      assert.deepEqual(all.dataClasses.find((d: Json) => d.name === 'Company').methods, COMPANY_METHODS);
      assert.deepEqual((await demo.request('/rest/$catalog/Company')).body.methods, COMPANY_METHODS);
    });

    it('lists entity class functions with applyTo entity, then exposed project methods by scope, and gives no methods to a dataclass with none (City)', () => {
      assert.deepEqual(all.dataClasses.find((d: Json) => d.name === 'Employee').methods, [
        { name: 'raise', applyTo: 'entity', exposed: true, allowedOnHTTPGET: false },
        { name: 'seniority', applyTo: 'entity', exposed: true, allowedOnHTTPGET: true },
        { name: 'bestPaid', applyTo: 'entityCollection', exposed: true, allowedOnHTTPGET: false },
        { name: 'payrollSummary', applyTo: 'entityCollection', exposed: true, allowedOnHTTPGET: false },
        { name: 'salaryBands', applyTo: 'dataClass', exposed: true, allowedOnHTTPGET: true },
        { name: 'teammates', applyTo: 'entity', exposed: true, allowedOnHTTPGET: false },
      ]); // its other methods (events, fullName) are not exposed
      assert.equal('methods' in all.dataClasses.find((d: Json) => d.name === 'City'), false);
    });

    it('lists the datastore class\'s exposed functions at the top of $catalog and $catalog/$all', async () => {
      const methods = [
        { name: 'authentify', exposed: true, allowedOnHTTPGET: false },
        { name: 'counts', exposed: true, allowedOnHTTPGET: true },
        { name: 'earningAtLeast', exposed: true, allowedOnHTTPGET: false },
        { name: 'hire', exposed: true, allowedOnHTTPGET: false },
        { name: 'hiredBetween', exposed: true, allowedOnHTTPGET: false },
        { name: 'logout', exposed: true, allowedOnHTTPGET: false },
        { name: 'pause', exposed: true, allowedOnHTTPGET: false },
        { name: 'payroll', exposed: true, allowedOnHTTPGET: false },
        { name: 'raiseSalaries', exposed: true, allowedOnHTTPGET: false },
        { name: 'renameSlowly', exposed: true, allowedOnHTTPGET: false },
        { name: 'spin', exposed: true, allowedOnHTTPGET: false },
        { name: 'topEarner', exposed: true, allowedOnHTTPGET: false },
        { name: 'whoCalls', exposed: true, allowedOnHTTPGET: false },
      ]; // secretReport is not exposed
      assert.deepEqual((await demo.request('/rest/$catalog')).body.methods, methods);
      assert.deepEqual(all.methods, methods);
    });
  });

  describe('shared singletons in the catalog', () => {
    const SINGLETONS = [{
      name: 'Tools',
      methods: [
        { name: 'companiesIn', allowedOnHTTPGET: false, exposed: true },
        { name: 'serverTime', allowedOnHTTPGET: true, exposed: true },
      ],
    }]; // describe() is not exposed

    it('lists them in a singletons section before the dataclasses of $catalog and $catalog/$all', async () => {
      const catalog = (await demo.request('/rest/$catalog')).body;
      assert.deepEqual(catalog.singletons, SINGLETONS);
      assert.deepEqual(Object.keys(catalog).slice(0, 2), ['singletons', 'dataClasses']);
      assert.deepEqual(all.singletons, SINGLETONS);
      assert.deepEqual(Object.keys(all).slice(0, 2), ['singletons', 'dataClasses']);
    });

    it('leaves them out of a dataclass\'s description', async () => {
      assert.equal('singletons' in (await demo.request('/rest/$catalog/Company')).body, false);
    });
  });

  describe('GET /rest/$catalog/$all: dataclass properties', () => {
    it('describes the same dataclasses as /rest/$catalog, in the same order, without AuditLog', () => {
      assert.deepEqual(all.dataClasses.map((d: Json) => d.name), EXPOSED);
    });

    it('gives name, className, collectionName, tableNumber, scope, dataURI, extraProperties, attributes and key', () => {
      for (const d of all.dataClasses) {
        assert.equal(typeof d.name, 'string');
        assert.equal(d.className, d.name, `${d.name}.className`);
        assert.equal(d.collectionName, `${d.name}Selection`, `${d.name}.collectionName`);
        assert.ok(Number.isInteger(d.tableNumber) && d.tableNumber > 0, `${d.name}.tableNumber is a positive integer`);
        assert.equal(d.scope, 'public');
        assert.equal(d.dataURI, `/rest/${d.name}`);
        assert.equal(typeof d.extraProperties, 'object');
        assert.ok(d.extraProperties !== null && !Array.isArray(d.extraProperties), `${d.name}.extraProperties is an object`);
        assert.ok(Array.isArray(d.attributes) && d.attributes.length > 0);
        assert.deepEqual(d.key, [{ name: 'ID' }], `${d.name}.key`);
      }
    });

    it('gives every dataclass its own table number', () => {
      const numbers = all.dataClasses.map((d: Json) => d.tableNumber);
      assert.equal(new Set(numbers).size, numbers.length);
    });

    it('carries the extraProperties of the model', () => {
      assert.deepEqual(byName(all.dataClasses, 'Company').extraProperties, { panelColor: '#4F81BD' });
      assert.deepEqual(byName(all.dataClasses, 'City').extraProperties, { panelColor: '#76923C' });
    });

    it('states defaultTopSize in $all only for dataclasses that set one (Company: 50)', () => {
      assert.equal(byName(all.dataClasses, 'Company').defaultTopSize, 50);
      assert.ok(!('defaultTopSize' in byName(all.dataClasses, 'City')));
      assert.ok(!('defaultTopSize' in byName(all.dataClasses, 'Employee')));
    });
  });

  describe('GET /rest/$catalog/$all: attribute properties', () => {
    it('has only public attributes, each with name, kind, scope and type', () => {
      for (const d of all.dataClasses) {
        for (const a of d.attributes) {
          for (const k of COMMON) assert.ok(k in a, `${d.name}.${a.name} has ${k}`);
          assert.equal(a.scope, 'public');
          assert.ok(KINDS.includes(a.kind), `${d.name}.${a.name}: kind '${a.kind}'`);
          assert.equal(typeof a.type, 'string');
        }
        const names = d.attributes.map((a: Json) => a.name);
        assert.equal(new Set(names).size, names.length, `${d.name}: attribute names are unique`);
      }
    });

    it('gives each attribute only the properties that apply to its kind, and the ones it needs', () => {
      for (const d of all.dataClasses) {
        for (const a of d.attributes) {
          const allowed = new Set([...COMMON, ...FREE, ...ALLOWED[a.kind]]);
          const extra = Object.keys(a).filter((k) => !allowed.has(k));
          assert.deepEqual(extra, [], `${d.name}.${a.name} (${a.kind}) has no property out of place`);
          for (const k of REQUIRED[a.kind]) assert.ok(k in a, `${d.name}.${a.name} (${a.kind}) has ${k}`);
        }
      }
    });

    it('omits optional flags when they are false (a flag that is there is true)', () => {
      for (const d of all.dataClasses) {
        for (const a of d.attributes) {
          for (const flag of OPTIONAL_FLAGS) {
            if (flag in a) assert.equal(a[flag], true, `${d.name}.${a.name}.${flag}`);
          }
        }
      }
    });

    it('types storage attributes with the catalog type names, relations with a dataclass or a selection name', () => {
      const dataClassNames = new Set(all.dataClasses.map((d: Json) => d.name));
      const selectionNames = new Set(all.dataClasses.map((d: Json) => d.collectionName));
      for (const d of all.dataClasses) {
        for (const a of d.attributes) {
          if (a.kind === 'storage') assert.ok(STORAGE_TYPES.includes(a.type), `${d.name}.${a.name}: type ${a.type}`);
          if (a.kind === 'relatedEntity') assert.ok(dataClassNames.has(a.type), `${d.name}.${a.name}: type ${a.type}`);
          if (a.kind === 'relatedEntities') assert.ok(selectionNames.has(a.type), `${d.name}.${a.name}: type ${a.type}`);
        }
      }
    });

    it('marks the primary key identifying and indexed, and no other attribute identifying', () => {
      for (const d of all.dataClasses) {
        const identifying = d.attributes.filter((a: Json) => a.identifying);
        assert.deepEqual(identifying.map((a: Json) => a.name), [d.key[0].name], d.name);
        assert.equal(identifying[0].indexed, true);
      }
    });

    it('marks indexed attributes (declared indexed, unique or foreign keys) and only those', () => {
      const employee = byName(all.dataClasses, 'Employee');
      const indexed = employee.attributes.filter((a: Json) => a.indexed).map((a: Json) => a.name).sort();
      assert.deepEqual(indexed, ['ID', 'employeeNumber', 'employerID', 'lastName', 'managerID']);
      assert.ok(!('indexed' in byName(employee.attributes, 'firstName')));
    });

    it('sets simpleDate on date-only attributes only', () => {
      const employee = byName(all.dataClasses, 'Employee');
      assert.equal(byName(employee.attributes, 'birthDate').simpleDate, true);
      assert.ok(!('simpleDate' in byName(employee.attributes, 'hiredAt')));
      assert.equal(byName(byName(all.dataClasses, 'Company').attributes, 'founded').simpleDate, true);
      for (const d of all.dataClasses) {
        for (const a of d.attributes) if (a.simpleDate) assert.equal(a.type, 'date', `${d.name}.${a.name}`);
      }
    });

    it('sets multiLine and defaultFormat where the model gives them', () => {
      const employee = byName(all.dataClasses, 'Employee');
      assert.equal(byName(employee.attributes, 'notes').multiLine, true);
      assert.ok(!('multiLine' in byName(employee.attributes, 'firstName')));
      assert.deepEqual(byName(employee.attributes, 'salary').defaultFormat, { format: '$###,###.00' });
      assert.ok(!('defaultFormat' in byName(employee.attributes, 'level')));
      assert.deepEqual(byName(byName(all.dataClasses, 'Company').attributes, 'revenues').defaultFormat, { format: '$###,###,###' });
    });

    it('describes an N→1 relation with its target as type and path, its foreign key and inverse name', () => {
      const company = byName(all.dataClasses, 'Company');
      const city = byName(company.attributes, 'city');
      const fk = byName(company.attributes, 'cityID');
      assert.deepEqual(city, {
        name: 'city', kind: 'relatedEntity', fieldPos: fk.fieldPos, scope: 'public',
        type: 'City', foreignKey: 'cityID', inverseName: 'companies', path: 'City',
      });
      const employer = byName(byName(all.dataClasses, 'Employee').attributes, 'employer');
      assert.equal(employer.type, 'Company');
      assert.equal(employer.foreignKey, 'employerID');
      assert.equal(employer.inverseName, 'staff');
      assert.equal(employer.path, 'Company');
    });

    it('describes a 1→N relation with a selection type, reversePath and the inverse relation as path', () => {
      const company = byName(all.dataClasses, 'Company');
      assert.deepEqual(byName(company.attributes, 'staff'), {
        name: 'staff', kind: 'relatedEntities', fieldPos: byName(company.attributes, 'ID').fieldPos, scope: 'public',
        type: 'EmployeeSelection', inverseName: 'employer', reversePath: true, path: 'employer',
      });
      const reports = byName(byName(all.dataClasses, 'Employee').attributes, 'reports');
      assert.equal(reports.type, 'EmployeeSelection');
      assert.equal(reports.path, 'manager');
      assert.equal(reports.inverseName, 'manager');
    });

    it('gives relations inverse names that point at each other', () => {
      for (const d of all.dataClasses) {
        for (const a of d.attributes) {
          if (a.kind !== 'relatedEntities' && a.kind !== 'relatedEntity') continue;
          if (!('inverseName' in a)) continue;
          const target = all.dataClasses.find((t: Json) => t.name === a.type || t.collectionName === a.type);
          const inverse = byName(target.attributes, a.inverseName);
          assert.equal(inverse.inverseName, a.name, `${d.name}.${a.name} ↔ ${target.name}.${inverse.name}`);
        }
      }
    });

    it('gives a relation the fieldPos of the field it is built on', () => {
      for (const d of all.dataClasses) {
        const keyPos = byName(d.attributes, d.key[0].name).fieldPos;
        for (const a of d.attributes) {
          if (a.kind === 'relatedEntity') assert.equal(a.fieldPos, byName(d.attributes, a.foreignKey).fieldPos, `${d.name}.${a.name}`);
          if (a.kind === 'relatedEntities') assert.equal(a.fieldPos, keyPos, `${d.name}.${a.name}`);
        }
        const storagePositions = d.attributes.filter((a: Json) => a.kind === 'storage').map((a: Json) => a.fieldPos);
        assert.equal(new Set(storagePositions).size, storagePositions.length, `${d.name}: storage fieldPos are distinct`);
      }
    });

    it('describes alias attributes with their target path and readOnly, without fieldPos', () => {
      const company = byName(all.dataClasses, 'Company');
      assert.deepEqual(byName(company.attributes, 'cityName'), {
        name: 'cityName', kind: 'alias', scope: 'public', type: 'string', path: 'city.name', readOnly: true,
      });
      const employee = byName(all.dataClasses, 'Employee');
      assert.equal(byName(employee.attributes, 'employerName').path, 'employer.name');
      assert.equal(byName(employee.attributes, 'employerCity').path, 'employer.city.name');
      assert.equal(byName(employee.attributes, 'employerCity').type, 'string');
    });

    it('describes calculated attributes as readOnly, without fieldPos', () => {
      const employee = byName(all.dataClasses, 'Employee');
      assert.deepEqual(byName(employee.attributes, 'fullName'), {
        name: 'fullName', kind: 'calculated', scope: 'public', type: 'string', readOnly: true,
      });
    });

    it('leaves out the non-exposed attribute Employee.secret', () => {
      const employee = byName(all.dataClasses, 'Employee');
      assert.ok(!employee.attributes.some((a: Json) => a.name === 'secret'));
    });

    it('lists the storage attributes of Company with their catalog types', () => {
      const company = byName(all.dataClasses, 'Company');
      const storage = Object.fromEntries(company.attributes.filter((a: Json) => a.kind === 'storage').map((a: Json) => [a.name, a.type]));
      assert.deepEqual(storage, {
        ID: 'long', name: 'string', companyCode: 'string', revenues: 'number', active: 'bool', logo: 'image',
        extra: 'object', founded: 'date', cityID: 'long',
      });
    });

    it('lists the storage attributes of Employee with their catalog types', () => {
      const employee = byName(all.dataClasses, 'Employee');
      const storage = Object.fromEntries(employee.attributes.filter((a: Json) => a.kind === 'storage').map((a: Json) => [a.name, a.type]));
      assert.deepEqual(storage, {
        ID: 'uuid', employeeNumber: 'long', firstName: 'string', lastName: 'string', salary: 'number', level: 'byte',
        extension: 'word', badge: 'long64', birthDate: 'date', hiredAt: 'date', dailyHours: 'duration', isManager: 'bool',
        photo: 'image', resume: 'blob', notes: 'string', skills: 'object', employerID: 'long', managerID: 'uuid',
      });
    });
  });

  describe('GET /rest/$catalog/{dataClass}', () => {
    it('describes Company exactly as its $all entry, with defaultTopSize 50', async () => {
      const res = await demo.request('/rest/$catalog/Company');
      assert.equal(res.status, 200);
      assert.equal(res.body.defaultTopSize, 50);
      assert.deepEqual(res.body, byName(all.dataClasses, 'Company'));
    });

    it('states the default defaultTopSize (100) for a dataclass that sets none, and otherwise matches $all', async () => {
      for (const name of ['Employee', 'City']) {
        const res = await demo.request(`/rest/$catalog/${name}`);
        assert.equal(res.status, 200);
        assert.equal(res.body.defaultTopSize, 100, name);
        const { defaultTopSize: _ignored, ...rest } = res.body;
        assert.deepEqual(rest, byName(all.dataClasses, name));
      }
    });

    it('leaves out Employee.secret', async () => {
      const res = await demo.request('/rest/$catalog/Employee');
      assert.ok(!res.body.attributes.some((a: Json) => a.name === 'secret'));
      assert.ok(!JSON.stringify(res.body).includes('secret'));
    });

    const notFound = [
      { url: '/rest/$catalog/Compny', culprit: 'Compny', suggestion: 'Company' },
      { url: '/rest/$catalog/company', culprit: 'company', suggestion: 'Company' },
      { url: '/rest/$catalog/Employe', culprit: 'Employe', suggestion: 'Employee' },
      { url: '/rest/$catalog/AuditLog', culprit: 'AuditLog', suggestion: undefined },
      { url: '/rest/$catalog/Nothing', culprit: 'Nothing', suggestion: undefined },
    ];
    for (const { url, culprit, suggestion } of notFound) {
      it(`answers 404 with __ERROR naming '${culprit}'${suggestion ? ` and suggesting '${suggestion}'` : ''} for ${url}`, async () => {
        const res = await demo.request(url);
        assert.equal(res.status, 404);
        assert.ok(Array.isArray(res.body.__ERROR) && res.body.__ERROR.length > 0);
        const [err] = res.body.__ERROR;
        assert.equal(err.errCode, ERRORS.UNKNOWN_DATACLASS.errCode);
        assert.equal(typeof err.componentSignature, 'string');
        assert.ok(err.message.includes(`"${culprit}"`), err.message);
        if (suggestion) assert.match(err.message, new RegExp(`did you mean '${suggestion}'`));
        else assert.doesNotMatch(err.message, /did you mean/);
      });
    }

    it('does not reveal the non-exposed AuditLog in a did-you-mean', async () => {
      const res = await demo.request('/rest/$catalog/AuditLo');
      assert.equal(res.status, 404);
      assert.doesNotMatch(res.body.__ERROR[0].message, /AuditLog'/);
    });

    it('answers 400 for more segments after the dataclass name', async () => {
      const res = await demo.request('/rest/$catalog/Company/name');
      assert.equal(res.status, 400);
      assert.equal(res.body.__ERROR[0].errCode, ERRORS.MALFORMED_URL.errCode);
    });

    it('answers 405 to a POST on the catalog list', async () => {
      for (const url of ['/rest/$catalog', '/rest/$catalog/$all']) {
        const res = await demo.request(url, 'POST');
        assert.equal(res.status, 405, url);
        assert.equal(res.body.__ERROR[0].errCode, ERRORS.METHOD_NOT_ALLOWED.errCode);
      }
    });
  });
});

describe('HTTP catalog: 4D\'s shape by default, this server\'s additions when asked (Prefer: extensions)', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
  });
  after(() => demo.close());
  const prefer = { prefer: 'extensions' };

  async function loginCookie(user: string, password: string): Promise<string> {
    const res = await demo.app.inject({ method: 'POST', url: '/rest/$directory/login', payload: [user, password] });
    assert.equal(res.statusCode, 200, res.body);
    return String(res.headers['set-cookie']).split(';')[0];
  }

  it('keeps 4D\'s shape by default: no sessionMay and no label in $catalog, $catalog/$all or $catalog/{dataClass}', async () => {
    for (const url of ['/rest/$catalog', '/rest/$catalog/$all', '/rest/$catalog/Employee', '/rest/$catalog/Company']) {
      const res = await demo.request(url);
      assert.equal(res.status, 200, url);
      const text = JSON.stringify(res.body);
      assert.doesNotMatch(text, /sessionMay|"label"|restricted/, url);
    }
  });

  it('says, when asked, what a guest may do in a dataclass: read but not write, and which exposed attributes it may not read', async () => {
    const res = await demo.request('/rest/$catalog/Employee', 'GET', undefined, prefer);
    assert.equal(res.status, 200);
    assert.deepEqual({ ...res.body.sessionMay, methods: undefined }, { read: true, create: false, update: false, drop: false, methods: undefined, restricted: ['salary'] });
    assert.equal(res.body.label, 'lastName', 'the model\'s label');
    // (a non-exposed attribute stays unnamed: secret)
    assert.doesNotMatch(JSON.stringify(res.body), /secret/);
    const user = await demo.request('/rest/$catalog/User', 'GET', undefined, prefer);
    assert.equal(user.status, 404, 'a non-exposed dataclass stays unknown');
  });

  it('lists, when asked, only the functions the session may call: a guest is not offered spin or pause, a session holding testing is', async () => {
    const guest = (await demo.request('/rest/$catalog', 'GET', undefined, prefer)).body;
    assert.ok(guest.methods.some((m: Json) => m.name === 'spin'), 'the methods array stays 4D\'s: every exposed function');
    for (const name of ['spin', 'pause', 'whoCalls', 'renameSlowly', 'raiseSalaries']) assert.ok(!guest.sessionMay.methods.includes(name), `a guest may not call ${name}`);
    assert.ok(guest.sessionMay.methods.includes('authentify'), 'authentify is always callable');
    assert.ok(guest.sessionMay.methods.includes('counts'));
    assert.deepEqual(Object.keys(guest.sessionMay.singletons), guest.singletons.map((s: Json) => s.name));
    const admin = await loginCookie('admin', 'admin123');
    const asAdmin = (await demo.request('/rest/$catalog', 'GET', undefined, { ...prefer, cookie: admin })).body;
    assert.ok(asAdmin.sessionMay.methods.includes('raiseSalaries'), 'admin includes salaries');
    assert.ok(!asAdmin.sessionMay.methods.includes('spin'), 'admin does not include testing');
    const employee = (await demo.request('/rest/$catalog/Employee', 'GET', undefined, { ...prefer, cookie: admin })).body;
    assert.deepEqual(employee.sessionMay.restricted, [], 'admin reads the salaries');
    assert.deepEqual({ ...employee.sessionMay, methods: undefined, restricted: undefined }, { read: true, create: true, update: true, drop: true, methods: undefined, restricted: undefined });
    assert.deepEqual(employee.sessionMay.methods, employee.methods.map((m: Json) => m.name));
  });

  it('reads the preference among others and in any case (Prefer: return=minimal, Extensions)', async () => {
    const res = await demo.request('/rest/$catalog/Company', 'GET', undefined, { prefer: 'return=minimal, Extensions' });
    assert.equal(res.body.sessionMay.read, true);
    for (const prefer of ['extensions=true', 'respond-async; wait=5, extensions; x=1']) {
      assert.ok((await demo.request('/rest/$catalog/Company', 'GET', undefined, { prefer })).body.sessionMay, prefer);
    }
  });

  it('keeps 4D\'s shape for extensions=false and for the word inside another preference\'s quoted value', async () => {
    for (const prefer of ['extensions=false', 'foo="a,extensions"', 'foo="extensions"', 'extension', 'x-extensions']) {
      assert.equal((await demo.request('/rest/$catalog/Company', 'GET', undefined, { prefer })).body.sessionMay, undefined, prefer);
    }
  });
});

describe('HTTP catalog: the model\'s label named only to a session that reads it', () => {
  let demo: DemoFixture;
  let tmp: ReturnType<typeof tempDir>;
  before(async () => {
    tmp = tempDir();
    const roles = JSON.parse(readFileSync(join(DEMO_DIR, 'roles.json'), 'utf8'));
    roles.permissions.allowed.push({ applyTo: 'Employee.lastName', type: 'attribute', read: ['salaries'] });
    writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify(roles));
    demo = await openDemo({ roles: join(tmp.dir, 'roles.json') });
  });
  after(async () => {
    await demo.close();
    tmp.remove();
  });

  it('leaves the label out for a guest who may not read lastName (named in restricted instead), and names it to one who may', async () => {
    const guest = (await demo.request('/rest/$catalog/Employee', 'GET', undefined, { prefer: 'extensions' })).body;
    assert.equal(guest.label, undefined);
    assert.ok(guest.sessionMay.restricted.includes('lastName'));
    const login = await demo.app.inject({ method: 'POST', url: '/rest/$directory/login', payload: ['admin', 'admin123'] });
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const admin = (await demo.request('/rest/$catalog/Employee', 'GET', undefined, { prefer: 'extensions', cookie })).body;
    assert.equal(admin.label, 'lastName');
  });
});
