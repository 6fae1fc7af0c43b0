"""CollectionManager: builds and exports a collections file (docs/format.md §6), as smdebug's."""
import json

from .. import _core
from .collection import Collection


class CollectionManager:
    def __init__(self, collections=None, create_default=False):
        self.collections = {} if collections is None else collections
        self._meta = {"num_workers": 1}

    def create_collection(self, name, cls=Collection):
        if name not in self.collections:
            self.collections[name] = cls(name)

    def get_collections(self):
        return self.collections

    def add(self, arg):
        if isinstance(arg, str):
            self.create_collection(arg)
        elif isinstance(arg, Collection):
            self.collections[arg.name] = arg
        else:
            raise TypeError(f"add takes a collection name or a Collection, not {type(arg).__name__}")

    def get(self, name, create=True):
        if name not in self.collections:
            if not create:
                from ..exceptions import SMDebugError

                raise SMDebugError(f"Collection {name} has not been created")
            self.create_collection(name)
        return self.collections[name]

    def update_meta(self, meta):
        if not isinstance(meta, dict):
            from ..exceptions import SMDebugTypeError

            raise SMDebugTypeError(f"meta should be a dict, got {type(meta)}")
        self._meta.update(meta)

    def get_num_workers(self):
        return int(self._meta["num_workers"])

    def set_num_workers(self, num_workers):
        self._meta["num_workers"] = int(num_workers)

    def to_json_dict(self):
        return {"collections": {n: c.to_json_dict() for n, c in self.collections.items()}, "_meta": dict(self._meta)}

    def to_json(self):
        return json.dumps(self.to_json_dict())

    @classmethod
    def load_from_string(cls, s, collection_class=Collection):
        """A collections file's text as a CollectionManager (its collections and _meta)."""
        from ..exceptions import SMDebugValueError

        params = json.loads(s)
        if params is None:
            return None
        if not isinstance(params, dict) or any(k not in ("collections", "_meta") for k in params):
            raise SMDebugValueError("a collections file holds only 'collections' and '_meta'")
        cm = cls()
        for entry in (params.get("collections") or {}).values():
            cm.add(collection_class.from_dict(entry))
        cm.update_meta(params.get("_meta") or {})
        return cm

    @classmethod
    def load(cls, filename, collection_class=Collection):
        """Reads a collections file (a local path) as a CollectionManager."""
        with open(filename, "r") as f:
            return cls.load_from_string(f.read(), collection_class)

    def export(self, out_dir, filename):
        """Writes collections/000000000/<filename> of the trial at out_dir (a folder or s3:// URL)."""
        _core.write_object(out_dir, "collections/000000000/" + filename, json.dumps(self.to_json_dict()).encode())

    def __eq__(self, other):
        return isinstance(other, CollectionManager) and self.collections == other.collections and self._meta == other._meta

    def __repr__(self):
        return f"<class CollectionManager: collection_names={list(self.collections.keys())}>"
