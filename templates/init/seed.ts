// Runs once, when the server starts on a new, empty database: a few authors and their books.

import type { DatastoreWithClasses } from 'dataset-rest';

const LIBRARY: [author: string, country: string, books: [title: string, year: number][]][] = [
  ['Ursula K. Le Guin', 'United States', [['A Wizard of Earthsea', 1968], ['The Left Hand of Darkness', 1969], ['The Dispossessed', 1974]]],
  ['Italo Calvino', 'Italy', [['Invisible Cities', 1972], ["If on a winter's night a traveler", 1979]]],
  ['Chinua Achebe', 'Nigeria', [['Things Fall Apart', 1958]]],
  ['Jorge Luis Borges', 'Argentina', [['Ficciones', 1944], ['The Aleph', 1949]]],
];

export default async function seed(ds: DatastoreWithClasses): Promise<void> {
  for (const [name, country, books] of LIBRARY) {
    const author = ds.Author.new();
    author.set('name', name);
    author.set('country', country);
    await author.save();
    for (const [title, year] of books) {
      const book = ds.Book.new();
      book.set('title', title);
      book.set('year', year);
      book.set('author', author);
      await book.save();
    }
  }
}
