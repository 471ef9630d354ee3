// Entry gate for the schema corpus: vetoes a run that has no ticket id.
export default async function hook({ variables }) {
  return variables.ticket_id ? ok() : veto("A ticket id is required.");
}
