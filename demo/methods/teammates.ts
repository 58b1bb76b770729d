// A project method of scope currentRecord: it runs on the entity of
// POST /rest/Employee({key})/teammates and answers a selection, sent as a collection
// (paged with $top/$skip, shaped with $attributes).

import { projectMethod } from 'dataset-rest';

export default projectMethod({
  dataClass: 'Employee',
  scope: 'currentRecord',
  exposed: true,
  params: [],
  run(employee) {
    return employee.getDataClass().query('employerID = :1 and ID != :2', employee.get('employerID'), employee.getKey());
  },
});
