// A project method of scope currentSelection answering an entity: the best-paid employee of the
// selection the request defines (POST /rest/Employee/bestPaid?$filter="employer.name = Acme"),
// sent as the entity itself. An empty selection has none: the method says so with an object.

import { projectMethod } from 'dataset-rest';

export default projectMethod({
  dataClass: 'Employee',
  scope: 'currentSelection',
  exposed: true,
  params: [],
  async run(selection) {
    return (await selection.orderBy('salary desc').first()) ?? { none: 'no employee in this selection' };
  },
});
