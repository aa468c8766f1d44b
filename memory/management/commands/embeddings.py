import time

from django.core.management.base import BaseCommand

from memory.embeddings import embed_one, export_onnx, onnx_model_path


class Command(BaseCommand):
    help = "Prepare the embedding model: export it to ONNX once (if needed) and load it."

    def handle(self, *args, **options) -> None:
        path = onnx_model_path()
        if not path.exists():
            self.stdout.write(f"[zero-memory] exporting all-MiniLM-L6-v2 to ONNX once -> {path}")
            start = time.perf_counter()
            export_onnx(path)
            self.stdout.write(f"[zero-memory] exported in {time.perf_counter() - start:.1f} s")
        embed_one("ready")
        self.stdout.write(f"[zero-memory] embedding model ready ({path.name})")
