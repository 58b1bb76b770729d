// A project method of scope currentSelection: it runs on the selection the request defines
// (POST /rest/Employee/payrollSummary?$filter="employer.name begin A"), the whole dataclass
// without one; parameters are declared, so a wrong one is refused before the method runs.

import { projectMethod } from 'dataset-rest';

export default projectMethod({
  dataClass: 'Employee',
  scope: 'currentSelection',
  exposed: true,
  params: ['raisePercent?: number'],
  async run(selection, raisePercent?: number) {
    const count = await selection.length;
    const total = await selection.sum('salary');
    const factor = 1 + (raisePercent ?? 0) / 100;
    return { count, total, average: count ? total / count : null, totalAfterRaise: Math.round(total * factor) };
  },
});
