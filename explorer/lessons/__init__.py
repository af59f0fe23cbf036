"""Lessons and guided tours: the syllabus catalogue, tour files, and (Qt) the start page, navigator,
tour player and slide export."""
from explorer.lessons.catalog import COMING, READY, Course, Lesson, courses, lesson, lesson_tour, lessons
from explorer.lessons.tour import Tour, TourStep, load_tour, save_tour

__all__ = ["COMING", "READY", "Course", "Lesson", "Tour", "TourStep", "courses", "lesson", "lesson_tour",
           "lessons", "load_tour", "save_tour"]
