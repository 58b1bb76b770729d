// Review scratch (issue 37): how long a login takes for a known name with a wrong password and for
// an unknown name (run: node --import tsx test/scratch/login-timing.ts). Measured equal (~27 ms each).

import { addUser, openUsersProject } from '../support/users-project.js';
const p = await openUsersProject({ users: { minPasswordLength: 8, lockout: { failures: 1000, minutes: 1 } } });
for (let u = 0; u < 8; u++) await addUser(p.a, `user${u}`, `password-${u}-x`, ['Editor']);
let n = 0;
const t = async (userName: string) => {
  const start = process.hrtime.bigint();
  const r = await p.a.app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [{ userName, password: 'wrong-password' }], remoteAddress: `10.1.${(n >> 8) & 255}.${n++ & 255}` });
  return [Number(process.hrtime.bigint() - start) / 1e6, r.statusCode] as const;
};
await t('warmup'); await t('user0');
const known: number[] = [], unknown: number[] = [];
for (let round = 0; round < 4; round++) for (let u = 0; u < 8; u++) {
  const [a, sa] = await t(`user${u}`); const [b, sb] = await t(`nouser${round}-${u}`);
  if (sa === 401) known.push(a); if (sb === 401) unknown.push(b);
}
const stats = (xs: number[]) => { xs.sort((a, b) => a - b); return `n=${xs.length} median=${xs[xs.length >> 1].toFixed(2)}ms mean=${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2)}ms`; };
console.log('known user, wrong password:', stats(known));
console.log('unknown user:              ', stats(unknown));
await p.close();
