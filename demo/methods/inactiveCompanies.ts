// A project method REST cannot call (exposed is not set): it is not in the catalog, and
// /rest/Company/inactiveCompanies answers like any unknown name: POST -10729, GET an unknown attribute (1500).

import { projectMethod } from 'dataset-rest';

export default projectMethod({
  dataClass: 'Company',
  scope: 'table',
  async run(companies) {
    return { inactive: await companies.query('active = false').length };
  },
});
