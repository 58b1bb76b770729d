// A project method of scope table: it runs on the whole Employee dataclass.
// POST or GET /rest/Employee/salaryBands

import { projectMethod } from 'dataset-rest';

export default projectMethod({
  dataClass: 'Employee',
  scope: 'table',
  exposed: true,
  params: [],
  onHttpGet: true,
  async run(employees) {
    return {
      under40k: await employees.query('salary < 40000').length,
      from40kTo80k: await employees.query('salary >= 40000 and salary < 80000').length,
      from80k: await employees.query('salary >= 80000').length,
      unknown: await employees.query('salary = null').length,
    };
  },
});
